resource "aws_security_group" "g" {
  name = "g"

  ingress = []

  ingress {
    from_port = 80
    to_port   = 80
    protocol  = "tcp"
  }
}

resource "aws_route_table" "r" {
  vpc_id = "vpc-1"

  route "office" {
    cidr_block = "192.168.0.0/16"
  }

  route {
    cidr_block = "10.0.0.0/8"
    gateway    = "igw-1"
  }

  route {
    cidr_block = ["10.1.0.0/16"]
  }
}
