variable "cidr" {
  type = string
}

resource "aws_vpc" "this" {
  cidr_block = var.cidr
}

resource "aws_ssm_parameter" "id" {
  name  = "/shop/net/id"
  type  = "String"
  value = aws_vpc.this.id
}
