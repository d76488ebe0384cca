resource "aws_ssm_parameter" "config" {
  name  = "/shop/config"
  type  = "String"
  value = "v1"
}
