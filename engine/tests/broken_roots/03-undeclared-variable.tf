resource "aws_sqs_queue" "q" {
  name = var.queue_name
}
