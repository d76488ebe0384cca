resource "aws_sqs_queue_policy" "p" {
  queue_url = aws_sqs_queue.jobs.url
  policy    = "{}"
}
