resource "aws_ssm_parameter" "a" {
  name        = "/shop/a"
  type        = "String"
  value       = "1"
  description = "new"
}

resource "aws_ssm_parameter" "c" {
  name  = "/shop/c"
  type  = "String"
  value = "1"
}

output "description" {
  value = aws_ssm_parameter.a.description
}
