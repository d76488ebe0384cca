variable "rules" {
  type = list(number)
}

resource "aws_security_group" "g" {
  name = "g"

  # for_each is not known during validate; the content is still checked.
  dynamic "egress" {
    for_each = var.rules
    content {
      from_port = egress.value
      to_port   = egress.value
      protocol  = "tcp"
      cidr      = "0.0.0.0/0"
    }
  }
}
