resource "aws_ssm_parameter" "a" {
  name  = "/shop/a"
  type  = "String"
  value = "1"
}

import {
  to = aws_ssm_parameter.a
  id = "/shop/a"
}
