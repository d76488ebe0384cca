resource "aws_sqs_queue" "a" {
  name = "a-${aws_sqs_queue.b.name}"
}

resource "aws_sqs_queue" "b" {
  name = "b-${aws_sqs_queue.a.name}"
}
