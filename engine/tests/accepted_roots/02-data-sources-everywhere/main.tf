# Data sources read from locals, module arguments, count and for_each.

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_region" "current" {}

locals {
  azs    = slice(data.aws_availability_zones.available.names, 0, 2)
  prefix = "net-${data.aws_region.current.name}"
}

resource "aws_vpc" "main" {
  cidr_block = "10.30.0.0/16"
  tags = {
    Name = local.prefix
  }
}

module "subnets" {
  source = "./modules/subnets"

  vpc_id = aws_vpc.main.id
  zones  = local.azs
  cidr   = aws_vpc.main.cidr_block
}

resource "aws_eip" "nat" {
  count  = length(data.aws_availability_zones.available.names) > 1 ? 1 : 0
  domain = "vpc"
}

resource "aws_ssm_parameter" "zone" {
  for_each = toset(local.azs)
  name     = "/${local.prefix}/${each.key}"
  type     = "String"
  value    = each.value
}

output "subnet_ids" {
  value = module.subnets.ids
}
