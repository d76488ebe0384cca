resource "aws_ssm_parameter" "config" {
  name  = "/shop/config"
  type  = "StringList"
  value = "a,b"

  lifecycle {
    create_before_destroy = true
  }
}
