resource "aws_vpn_gateway" "office" {
  amazon_side_asn = "64512"
  tags            = { Name = "office" }
}
