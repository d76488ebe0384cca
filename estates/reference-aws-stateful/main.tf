# reference-aws-stateful: the AWS counterpart of the stateful reference estate.
# A small "job processing" system: an artifact bucket (versioned, with a bucket
# policy), a job queue with its dead-letter queue, an event topic fanned out to
# a queue, a worker IAM role with a customer-managed policy, a DynamoDB state
# table, the worker's settings parameter and two sharded SSM parameters. All
# names are fixed and prefixed "refaws-" (or "/refaws/") so the live objects
# are predictable. Endpoints and credentials are injected by a generated
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
    app = "refaws"
  }
}

# --- S3 ----------------------------------------------------------------------

resource "aws_s3_bucket" "artifacts" {
  bucket        = "refaws-artifacts"
  force_destroy = true
  tags          = local.tags
}

resource "aws_s3_bucket_versioning" "artifacts" {
  bucket = aws_s3_bucket.artifacts.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_policy" "artifacts" {
  bucket = aws_s3_bucket.artifacts.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "WorkerRead"
      Effect    = "Allow"
      Principal = { AWS = aws_iam_role.worker.arn }
      Action    = "s3:GetObject"
      Resource  = "${aws_s3_bucket.artifacts.arn}/*"
    }]
  })
}

# --- SQS ---------------------------------------------------------------------

resource "aws_sqs_queue" "jobs_dlq" {
  name                      = "refaws-jobs-dlq"
  message_retention_seconds = 1209600
  tags                      = local.tags
}

resource "aws_sqs_queue" "jobs" {
  name                       = "refaws-jobs"
  visibility_timeout_seconds = 60
  tags                       = local.tags

  # The redrive policy is owned by aws_sqs_queue_redrive_policy.jobs below.
  # aws_sqs_queue normalises the policy JSON on plan but not on read, so an
  # endpoint that re-serialises it (moto answers `{"k": v, ...}` where AWS
  # answers `{"k":v,...}`) would otherwise show a perpetual whitespace diff.
  lifecycle {
    ignore_changes = [redrive_policy]
  }
}

# Failed jobs land in the dead-letter queue after five receives. This resource
# compares the policy as JSON rather than as a string.
resource "aws_sqs_queue_redrive_policy" "jobs" {
  queue_url = aws_sqs_queue.jobs.id

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.jobs_dlq.arn
    maxReceiveCount     = 5
  })
}

resource "aws_sqs_queue" "events" {
  name = "refaws-events"
  tags = local.tags
}

resource "aws_sqs_queue_policy" "events" {
  queue_url = aws_sqs_queue.events.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AllowTopicSend"
      Effect    = "Allow"
      Principal = { Service = "sns.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = aws_sqs_queue.events.arn
      Condition = {
        ArnEquals = { "aws:SourceArn" = aws_sns_topic.events.arn }
      }
    }]
  })
}

# --- SNS ---------------------------------------------------------------------

resource "aws_sns_topic" "events" {
  name = "refaws-events"
  tags = local.tags
}

resource "aws_sns_topic_subscription" "events_to_queue" {
  topic_arn = aws_sns_topic.events.arn
  protocol  = "sqs"
  endpoint  = aws_sqs_queue.events.arn
}

# --- IAM ---------------------------------------------------------------------

resource "aws_iam_role" "worker" {
  name = "refaws-worker"
  tags = local.tags

  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "lambda.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

resource "aws_iam_policy" "worker" {
  name        = "refaws-worker"
  description = "Lets the refaws worker consume jobs and record state."
  tags        = local.tags

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "ConsumeJobs"
        Effect   = "Allow"
        Action   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
        Resource = aws_sqs_queue.jobs.arn
      },
      {
        Sid      = "RecordState"
        Effect   = "Allow"
        Action   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
        Resource = aws_dynamodb_table.state.arn
      },
    ]
  })
}

resource "aws_iam_role_policy_attachment" "worker" {
  role       = aws_iam_role.worker.name
  policy_arn = aws_iam_policy.worker.arn
}

# --- DynamoDB ----------------------------------------------------------------

resource "aws_dynamodb_table" "state" {
  name         = "refaws-state"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  tags         = local.tags

  attribute {
    name = "pk"
    type = "S"
  }
}

# --- SSM ---------------------------------------------------------------------

resource "aws_ssm_parameter" "shard" {
  count = 2

  name  = "/refaws/shard/${count.index}"
  type  = "String"
  value = "shard-${count.index}"
  tags  = local.tags
}

# The worker's settings, read when it starts. Nothing refers to this block.
resource "aws_ssm_parameter" "worker_concurrency" {
  name  = "/refaws/worker/concurrency"
  type  = "String"
  value = "4"
  tags  = local.tags
}
