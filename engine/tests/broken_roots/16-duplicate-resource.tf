resource "aws_sqs_queue" "q" {
  name = "one"
}

resource "aws_sqs_queue" "q" {
  name = "two"
}
