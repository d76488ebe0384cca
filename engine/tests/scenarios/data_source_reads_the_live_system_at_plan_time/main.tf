data "aws_sqs_queue" "billing" {
  name = "billing-jobs"
}

resource "aws_ssm_parameter" "billing_queue" {
  name           = "/shop/billing-queue"
  type           = "String"
  insecure_value = data.aws_sqs_queue.billing.url
}
