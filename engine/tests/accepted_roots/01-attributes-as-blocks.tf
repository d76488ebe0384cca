# Rules and routes are attributes of list or set of object type in the aws
# provider's schema; terraform lets a root write them as blocks, static or
# dynamic, one element each.

variable "web_ports" {
  type    = list(number)
  default = [80, 443]
}

variable "extra_routes" {
  type = map(object({
    cidr = string
    via  = optional(string)
  }))
  default = {
    office = { cidr = "192.168.0.0/16" }
  }
}

resource "aws_vpc" "main" {
  cidr_block = "10.20.0.0/16"
}

resource "aws_internet_gateway" "gw" {
  vpc_id = aws_vpc.main.id
}

resource "aws_security_group" "web" {
  name   = "web"
  vpc_id = aws_vpc.main.id

  ingress {
    description = "ssh from the vpc"
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = [aws_vpc.main.cidr_block]
  }

  dynamic "ingress" {
    for_each = var.web_ports
    iterator = port
    content {
      from_port   = port.value
      to_port     = port.value
      protocol    = "tcp"
      cidr_blocks = ["0.0.0.0/0"]
    }
  }

  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

# The default group's rules come from a value known only after apply.
resource "aws_default_security_group" "default" {
  vpc_id = aws_vpc.main.id

  dynamic "ingress" {
    for_each = aws_security_group.web.ingress
    content {
      from_port       = ingress.value.from_port
      to_port         = ingress.value.to_port
      protocol        = ingress.value.protocol
      security_groups = [aws_security_group.web.id]
    }
  }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.main.id

  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.gw.id
  }

  dynamic "route" {
    for_each = var.extra_routes
    content {
      cidr_block = route.value.cidr
      gateway_id = coalesce(route.value.via, aws_internet_gateway.gw.id)
    }
  }
}

resource "aws_default_route_table" "main" {
  default_route_table_id = aws_vpc.main.default_route_table_id

  dynamic "route" {
    for_each = []
    content {
      cidr_block = route.value
    }
  }
}

# Written as an argument, the same attribute takes a list.
resource "aws_network_acl" "edge" {
  vpc_id = aws_vpc.main.id
  ingress = [{
    action          = "allow"
    cidr_block      = "10.0.0.0/8"
    from_port       = 443
    to_port         = 443
    protocol        = "tcp"
    rule_no         = 100
    icmp_code       = null
    icmp_type       = null
    ipv6_cidr_block = null
  }]
}
