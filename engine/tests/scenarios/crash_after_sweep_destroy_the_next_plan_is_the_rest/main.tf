resource "aws_ssm_parameter" "first" {
  name  = "/shop/first"
  type  = "String"
  value = "1"
}

resource "aws_ssm_parameter" "second" {
  name  = "/shop/second"
  type  = "String"
  value = aws_ssm_parameter.first.arn
}
