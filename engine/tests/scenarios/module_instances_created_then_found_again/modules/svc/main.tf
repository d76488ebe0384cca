variable "name" {
  type = string
}

resource "aws_sqs_queue" "inbox" {
  name = "shop-${var.name}-inbox"
}

resource "aws_ssm_parameter" "inbox_url" {
  name  = "/shop/svc/${var.name}/inbox-url"
  type  = "String"
  value = aws_sqs_queue.inbox.url
}
