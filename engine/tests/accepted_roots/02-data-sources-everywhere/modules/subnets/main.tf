variable "vpc_id" {
  type = string
}

variable "zones" {
  type = list(string)
}

variable "cidr" {
  type = string
}

data "aws_availability_zone" "each" {
  for_each = toset(var.zones)
  name     = each.key
}

resource "aws_subnet" "this" {
  for_each          = data.aws_availability_zone.each
  vpc_id            = var.vpc_id
  availability_zone = each.value.name
  cidr_block        = cidrsubnet(var.cidr, 8, index(var.zones, each.key))
}

output "ids" {
  value = [for s in aws_subnet.this : s.id]
}
