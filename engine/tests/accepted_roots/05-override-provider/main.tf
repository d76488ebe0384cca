# No provider block here: the override file's is the whole configuration
# of the default aws provider.

variable "retention" {
  type    = number
  default = 60
}

resource "aws_sqs_queue" "q" {
  name                      = "overridden"
  message_retention_seconds = var.retention
}
