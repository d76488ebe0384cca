resource "aws_ssm_parameter" "a" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

resource "aws_ssm_parameter" "b" {
  name  = "/shop/b"
  type  = "String"
  value = "2"
}

resource "aws_ssm_parameter" "copy_of_a" {
  name  = "/shop/copy"
  type  = "String"
  value = aws_ssm_parameter.a.value
}
