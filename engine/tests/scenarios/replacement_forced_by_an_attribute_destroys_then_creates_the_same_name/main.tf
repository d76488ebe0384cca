resource "aws_ssm_parameter" "config" {
  name  = "/shop/config"
  type  = "StringList"
  value = "a,b"
}
