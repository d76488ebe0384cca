# reference-aws-platform-app: the team that runs its services on the
# platform. It owns no whole object of the platform's, only parts of them:
# the intake queue's policy, a subscription of the intake queue to the alert
# topic, an attachment of its own audit policy to the api service's role,
# and one tag (owner) on the sessions table, which the platform's block
# leaves alone. Only the audit policy is an object of its own. The
# platform's objects are found by name through data sources. Endpoints and
# credentials are injected by a generated *_override.tf, as for the
# platform's root.

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

data "aws_sqs_queue" "intake" {
  name = "platform-intake"
}

data "aws_sns_topic" "alerts" {
  name = "platform-alerts"
}

data "aws_dynamodb_table" "sessions" {
  name = "platform-sessions"
}

# The app's own object: what its auditors may read.
resource "aws_iam_policy" "audit" {
  name        = "platform-app-audit"
  description = "Lets the app's auditors read the sessions table."

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ReadSessions"
      Effect   = "Allow"
      Action   = ["dynamodb:GetItem", "dynamodb:Query"]
      Resource = data.aws_dynamodb_table.sessions.arn
    }]
  })
}

# Parts of the platform's objects.
resource "aws_iam_role_policy_attachment" "api_audit" {
  role       = "platform-api"
  policy_arn = aws_iam_policy.audit.arn
}

resource "aws_sqs_queue_policy" "intake" {
  queue_url = data.aws_sqs_queue.intake.url

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AlertsIn"
      Effect    = "Allow"
      Principal = { Service = "sns.amazonaws.com" }
      Action    = "sqs:SendMessage"
      Resource  = data.aws_sqs_queue.intake.arn
      Condition = { ArnEquals = { "aws:SourceArn" = data.aws_sns_topic.alerts.arn } }
    }]
  })
}

resource "aws_sns_topic_subscription" "alerts_to_intake" {
  topic_arn = data.aws_sns_topic.alerts.arn
  protocol  = "sqs"
  endpoint  = data.aws_sqs_queue.intake.arn
}

resource "aws_dynamodb_tag" "owner" {
  resource_arn = data.aws_dynamodb_table.sessions.arn
  key          = "owner"
  value        = "app"
}
