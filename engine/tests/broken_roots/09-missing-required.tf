resource "aws_ssm_parameter" "p" {
  name  = "/app/p"
  value = "v"
}
