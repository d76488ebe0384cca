resource "aws_iam_policy" "read" {
  name   = "shop-read"
  policy = "{}"
}
