resource "aws_sqs_queue" "q" {
  for_each = ["a", "b"]
  name     = each.key
}
