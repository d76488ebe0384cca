resource "aws_ssm_parameter" "a" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

output "a_arn" {
  value = aws_ssm_parameter.a.arn
}

output "nothing" {
  value = null
}
