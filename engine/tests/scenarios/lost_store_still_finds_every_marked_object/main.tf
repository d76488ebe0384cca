resource "aws_sqs_queue" "jobs" {
  name = "shop-jobs"
}

resource "aws_ssm_parameter" "queue_url" {
  name  = "/shop/queue-url"
  type  = "String"
  value = aws_sqs_queue.jobs.url
}

resource "aws_iam_role" "worker" {
  name               = "shop-worker"
  assume_role_policy = "{}"
}

resource "aws_s3_bucket" "assets" {
  bucket = "shop-assets"
}
