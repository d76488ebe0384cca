resource "aws_sqs_queue" "q" {
  nme = "jobs"
}
