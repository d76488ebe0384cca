resource "aws_sqs_queue" "q" {
  count    = 2
  for_each = toset(["a"])
  name     = "q"
}
