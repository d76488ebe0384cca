# Gateway endpoints for the services the private subnets reach without the
# NAT gateway: S3 and DynamoDB, routed through the given route tables.

variable "vpc_id" {
  type = string
}

variable "route_table_ids" {
  type = list(string)
}

variable "services" {
  type = set(string)
}

variable "name" {
  type = string
}

data "aws_region" "current" {}

resource "aws_vpc_endpoint" "gateway" {
  for_each = var.services

  vpc_id            = var.vpc_id
  service_name      = "com.amazonaws.${data.aws_region.current.name}.${each.key}"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = var.route_table_ids

  tags = {
    Name = "${var.name}-${each.key}"
  }
}

output "ids" {
  value = { for k, e in aws_vpc_endpoint.gateway : k => e.id }
}
