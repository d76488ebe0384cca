resource "aws_ssm_parameter" "config" {
  name  = "/shop/config-v2"
  type  = "String"
  value = "v2"

  lifecycle {
    create_before_destroy = true
  }
}
