resource "aws_ssm_parameter" "a" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

removed {
  from = aws_ssm_parameter.b

  lifecycle {
    destroy = false
  }
}
