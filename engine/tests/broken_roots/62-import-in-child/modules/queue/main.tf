resource "aws_sqs_queue" "q" {
  name = "q"
}

import {
  to = aws_sqs_queue.q
  id = "https://sqs.us-east-1.amazonaws.com/000000000000/q"
}
