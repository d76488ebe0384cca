variable "name" {
  type      = string
  sensitive = true
}

resource "aws_sqs_queue" "q" {
  name          = var.name
  delay_seconds = "later"
}

output "name" {
  value     = aws_sqs_queue.q.name
  sensitive = true
}
