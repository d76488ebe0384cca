resource "aws_ssm_parameter" "new" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

moved {
  from = aws_ssm_parameter.old
  to   = aws_ssm_parameter.new
}
