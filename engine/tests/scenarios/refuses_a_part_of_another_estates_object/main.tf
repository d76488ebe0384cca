resource "aws_sqs_queue_policy" "jobs" {
  queue_url = "https://sqs.us-east-1.amazonaws.com/123456789012/billing-jobs"
  policy    = "{}"
}
