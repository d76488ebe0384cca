resource "aws_sqs_queue" "q" {
  for_each = null
  name     = each.key
}
