resource "aws_iam_role" "api" {
  name               = "shop-api"
  assume_role_policy = "{}"
}
