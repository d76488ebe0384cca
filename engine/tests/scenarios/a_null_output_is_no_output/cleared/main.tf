resource "aws_ssm_parameter" "a" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

output "a_arn" {
  value = null
}

output "nothing" {
  value = null
}
