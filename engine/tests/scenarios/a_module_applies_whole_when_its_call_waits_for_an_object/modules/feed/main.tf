variable "queue" {
  type = string
}

# Uses nothing the call passes in.
resource "aws_ssm_parameter" "schema" {
  name  = "/shop/feed/schema"
  type  = "String"
  value = "v2"
}

resource "aws_ssm_parameter" "queue" {
  name  = "/shop/feed/queue"
  type  = "String"
  value = var.queue
}
