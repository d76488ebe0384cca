resource "aws_sqs_queue" "jobs" {
  name = "shop-jobs-v2"

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_ssm_parameter" "queue_url" {
  name  = "/shop/queue-url"
  type  = "String"
  value = aws_sqs_queue.jobs.url
}
