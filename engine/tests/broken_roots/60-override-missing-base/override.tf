variable "m" {
  default = 2
}

resource "aws_sqs_queue" "r" {
  name = "r"
}

provider "aws" {
  alias  = "west"
  region = "us-west-2"
}

moved {
  from = aws_sqs_queue.a
  to   = aws_sqs_queue.q
}
