resource "aws_iam_role" "worker" {
  name               = "shop-worker"
  assume_role_policy = "{}"
}

resource "aws_iam_role_policy_attachment" "read" {
  role       = aws_iam_role.worker.name
  policy_arn = "arn:aws:iam::aws:policy/ReadOnlyAccess"
}
