# removed, import and check blocks.

resource "aws_sqs_queue" "jobs" {
  name = "jobs"
}

removed {
  from = aws_sqs_queue.retired

  lifecycle {
    destroy = false
  }
}

removed {
  from = module.old_network
}

import {
  to = aws_sqs_queue.jobs
  id = "https://sqs.us-east-1.amazonaws.com/000000000000/jobs"
}

variable "topics" {
  type    = set(string)
  default = ["alerts"]
}

resource "aws_sns_topic" "t" {
  for_each = var.topics
  name     = each.key
}

import {
  for_each = var.topics
  to       = aws_sns_topic.t[each.key]
  id       = "arn:aws:sns:us-east-1:000000000000:${each.key}"
}

check "queue_is_reachable" {
  data "aws_sqs_queue" "jobs" {
    name = aws_sqs_queue.jobs.name
  }

  assert {
    condition     = data.aws_sqs_queue.jobs.url != ""
    error_message = "The jobs queue has no URL."
  }
}

check "topics" {
  assert {
    condition     = length(var.topics) > 0
    error_message = "No topic is declared."
  }
}
