resource "aws_sqs_queue" "q" {
  count = -1
  name  = "q-${count.index}"
}
