resource "aws_sqs_queue" "q" {
  name = "q"
}

import {
  to = aws_sqs_queue.q
  id = "https://sqs.us-east-1.amazonaws.com/000000000000/q"
}

import {
  to = aws_sqs_queue.q
  id = "again"
}

import {
  to = data.aws_sqs_queue.q
  id = "q"
}

import {
  to = "aws_sqs_queue.q"
  id = "q"
}

import {
  to       = aws_sqs_queue.q
  id       = "q"
  provider = aws
}
