resource "aws_sqs_queue" "q" {
  for_each = toset(["a"])
  name     = each.key
}

import {
  for_each = toset(["a"])
  to       = aws_sqs_queue.q[each.key]
  id       = var.prefix
}

import {
  to = aws_sqs_queue.q[each.key]
  id = "b"
}
