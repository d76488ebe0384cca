# A module names itself to its provider in provider_meta; the aws
# provider's meta schema is empty, so the block is too.
terraform {
  required_providers {
    aws = {
      source = "hashicorp/aws"
    }
  }

  provider_meta "aws" {}
}

variable "name" {
  type = string
}

resource "aws_sqs_queue" "q" {
  name = var.name
}
