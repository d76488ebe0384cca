provider "aws" {
  region = "eu-west-1"
}

variable "retention" {
  default = 120
}

resource "aws_sqs_queue" "q" {
  delay_seconds = 5
}
