resource "aws_sqs_queue" "q" {
  name = "q"
}
