resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
}

moved {
  from = aws_vpc.this
  to   = aws_vpc.main
}
