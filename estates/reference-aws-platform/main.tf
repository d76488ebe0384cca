# reference-aws-platform: a small internal platform that hosts three services.
# Each service in local.services gets, by for_each over the map, an IAM role,
# an inline role policy and an attachment of the shared log-writing policy,
# and an SSM parameter with its port. Around them: a versioned log bucket with
# a bucket policy naming every service role, a sessions table, an alert topic
# fanned out to a queue, an intake queue, a release parameter and a
# two-instance count of replica parameters. The versioning, the bucket policy,
# the inline role policies, the attachments and the subscription carry no
# tags: they are owned through their parents (the subscription found in
# its topic's subscriptions). All names are fixed and prefixed "platform-" (or
# "/platform/"). Endpoints and credentials are injected by a generated
# *_override.tf; keep the provider block below down to the region.

terraform {
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "= 5.100.0"
    }
  }
}

provider "aws" {
  region = "us-east-1"
}

locals {
  tags = {
    app = "platform"
  }

  # The services the platform hosts.
  services = {
    api = {
      port = 8080
      team = "edge"
    }
    billing = {
      port = 8081
      team = "payments"
    }
    search = {
      port = 8082
      team = "discovery"
    }
  }
}

# --- IAM: one role per service -----------------------------------------------

resource "aws_iam_role" "service" {
  for_each = local.services

  name = "platform-${each.key}"
  tags = merge(local.tags, { team = each.value.team })

  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ecs-tasks.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

# What only this service may do: read its own settings, keep sessions, and
# hand work to the intake queue.
resource "aws_iam_role_policy" "service" {
  for_each = aws_iam_role.service

  name = "platform-${each.key}-own"
  role = each.value.name

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "OwnSettings"
        Effect   = "Allow"
        Action   = "ssm:GetParameter"
        Resource = aws_ssm_parameter.service[each.key].arn
      },
      {
        Sid      = "Sessions"
        Effect   = "Allow"
        Action   = ["dynamodb:GetItem", "dynamodb:PutItem"]
        Resource = aws_dynamodb_table.sessions.arn
      },
      {
        Sid      = "Intake"
        Effect   = "Allow"
        Action   = "sqs:SendMessage"
        Resource = aws_sqs_queue.intake.arn
      },
    ]
  })
}

# What every service may do, attached to each role.
resource "aws_iam_policy" "logs_write" {
  name        = "platform-logs-write"
  description = "Lets a platform service write its own logs."
  tags        = local.tags

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "WriteLogs"
      Effect   = "Allow"
      Action   = "s3:PutObject"
      Resource = "${aws_s3_bucket.logs.arn}/services/*"
    }]
  })
}

resource "aws_iam_role_policy_attachment" "logs_write" {
  for_each = aws_iam_role.service

  role       = each.value.name
  policy_arn = aws_iam_policy.logs_write.arn
}

# --- S3: the log bucket ------------------------------------------------------

resource "aws_s3_bucket" "logs" {
  bucket        = "platform-logs"
  force_destroy = true
  tags          = local.tags
}

resource "aws_s3_bucket_versioning" "logs" {
  bucket = aws_s3_bucket.logs.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_policy" "logs" {
  bucket = aws_s3_bucket.logs.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "ServicesWrite"
      Effect    = "Allow"
      Principal = { AWS = [for k in sort(keys(aws_iam_role.service)) : aws_iam_role.service[k].arn] }
      Action    = "s3:PutObject"
      Resource  = "${aws_s3_bucket.logs.arn}/services/*"
    }]
  })
}

# --- DynamoDB ----------------------------------------------------------------

resource "aws_dynamodb_table" "sessions" {
  name         = "platform-sessions"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "session"
  tags         = local.tags

  attribute {
    name = "session"
    type = "S"
  }

  # The app estate (app/) writes the owner tag on this table; the platform
  # keeps the boundary by leaving that one tag alone.
  lifecycle {
    ignore_changes = [tags["owner"]]
  }
}

# --- SNS and SQS: alerts and intake ------------------------------------------

resource "aws_sns_topic" "alerts" {
  name = "platform-alerts"
  tags = local.tags
}

resource "aws_sqs_queue" "alerts" {
  name = "platform-alerts"
  tags = local.tags
}

resource "aws_sns_topic_subscription" "alerts_to_queue" {
  topic_arn = aws_sns_topic.alerts.arn
  protocol  = "sqs"
  endpoint  = aws_sqs_queue.alerts.arn
}

resource "aws_sqs_queue" "intake" {
  name                       = "platform-intake"
  visibility_timeout_seconds = 120
  tags                       = local.tags
}

# --- SSM ---------------------------------------------------------------------

resource "aws_ssm_parameter" "service" {
  for_each = local.services

  name  = "/platform/services/${each.key}/port"
  type  = "String"
  value = tostring(each.value.port)
  tags  = merge(local.tags, { team = each.value.team })
}

resource "aws_ssm_parameter" "replica" {
  count = 2

  name  = "/platform/replica/${count.index}"
  type  = "String"
  value = "replica-${count.index}"
  tags  = local.tags
}

# The platform's release, read by operators. Nothing refers to this block.
resource "aws_ssm_parameter" "release" {
  name  = "/platform/release"
  type  = "String"
  value = "2026.12"
  tags  = local.tags
}
