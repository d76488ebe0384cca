resource "aws_ssm_parameter" "new" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}
