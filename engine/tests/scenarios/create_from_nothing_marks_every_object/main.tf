provider "aws" {
  region = "us-east-1"
}

resource "aws_sqs_queue" "jobs" {
  name = "shop-jobs"
  tags = {
    team = "shop"
  }
}

resource "aws_ssm_parameter" "queue_url" {
  name  = "/shop/queue-url"
  type  = "String"
  value = aws_sqs_queue.jobs.url
}
