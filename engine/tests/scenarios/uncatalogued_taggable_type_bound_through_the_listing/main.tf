resource "aws_customer_gateway" "office" {
  bgp_asn    = "65000"
  ip_address = "198.51.100.7"
  type       = "ipsec.1"
  tags       = { Name = "office" }
}
