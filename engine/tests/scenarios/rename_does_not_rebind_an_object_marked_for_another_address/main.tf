resource "aws_ssm_parameter" "config" {
  name  = "/shop/config-v2"
  type  = "String"
  value = "v2"
}

resource "aws_ssm_parameter" "flags" {
  name  = "/shop/flags"
  type  = "String"
  value = "on"
}
