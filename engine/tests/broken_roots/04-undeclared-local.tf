locals {
  prefix = "app"
}

resource "aws_sqs_queue" "q" {
  name = "${local.prefx}-jobs"
}
