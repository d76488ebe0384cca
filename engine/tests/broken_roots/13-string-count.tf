resource "aws_sqs_queue" "q" {
  count = "three"
  name  = "q-${count.index}"
}
