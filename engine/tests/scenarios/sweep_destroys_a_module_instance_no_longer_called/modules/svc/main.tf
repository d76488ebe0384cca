variable "name" {
  type = string
}

resource "aws_ssm_parameter" "port" {
  name  = "/shop/svc/${var.name}/port"
  type  = "String"
  value = "8080"
}
