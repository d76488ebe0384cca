variable "n" {
  default = 1
}

resource "aws_sqs_queue" "q" {
  name = "q"
}
