# A network root in the shape teams write one: a VPC over three
# availability zones, public subnets (for_each) behind an internet gateway
# and private subnets (count) behind a NAT gateway, route tables with their
# routes and associations, security groups with rules of their own and
# inline, a network ACL, gateway endpoints from a local module, and the
# VPC's flow log written to a KMS-encrypted log group by a role of its
# own. SSM parameters publish what other roots read.

terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "5.100.0"
    }
  }
}

provider "aws" {
  region = "us-east-1"
}

locals {
  name = "netref"
  azs  = slice(data.aws_availability_zones.available.names, 0, 3)

  public_cidrs  = { for i, az in local.azs : az => cidrsubnet(aws_vpc.main.cidr_block, 8, i) }
  private_count = 3
}

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_caller_identity" "current" {}

resource "aws_vpc" "main" {
  cidr_block           = "10.40.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true

  tags = {
    Name = local.name
  }
}

resource "aws_subnet" "public" {
  for_each = local.public_cidrs

  vpc_id                  = aws_vpc.main.id
  availability_zone       = each.key
  cidr_block              = each.value
  map_public_ip_on_launch = true

  tags = {
    Name = "${local.name}-public-${each.key}"
    Tier = "public"
  }
}

resource "aws_subnet" "private" {
  count = local.private_count

  vpc_id            = aws_vpc.main.id
  availability_zone = local.azs[count.index]
  cidr_block        = cidrsubnet(aws_vpc.main.cidr_block, 8, 10 + count.index)

  tags = {
    Name = "${local.name}-private-${local.azs[count.index]}"
    Tier = "private"
  }
}

resource "aws_internet_gateway" "main" {
  vpc_id = aws_vpc.main.id

  tags = {
    Name = local.name
  }
}

resource "aws_eip" "nat" {
  domain = "vpc"

  tags = {
    Name = "${local.name}-nat"
  }

  depends_on = [aws_internet_gateway.main]
}

resource "aws_nat_gateway" "main" {
  allocation_id = aws_eip.nat.id
  subnet_id     = aws_subnet.public[local.azs[0]].id

  tags = {
    Name = local.name
  }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.main.id

  tags = {
    Name = "${local.name}-public"
  }
}

resource "aws_route" "public_internet" {
  route_table_id         = aws_route_table.public.id
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.main.id
}

resource "aws_route_table_association" "public" {
  for_each = aws_subnet.public

  subnet_id      = each.value.id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.main.id

  tags = {
    Name = "${local.name}-private"
  }
}

resource "aws_route" "private_nat" {
  route_table_id         = aws_route_table.private.id
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.main.id
}

resource "aws_route_table_association" "private" {
  count = local.private_count

  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

module "endpoints" {
  source = "./endpoints"

  name            = local.name
  vpc_id          = aws_vpc.main.id
  route_table_ids = [aws_route_table.public.id, aws_route_table.private.id]
  services        = ["s3", "dynamodb"]
}

resource "aws_network_acl" "private" {
  vpc_id     = aws_vpc.main.id
  subnet_ids = aws_subnet.private[*].id

  ingress {
    protocol   = "-1"
    rule_no    = 100
    action     = "allow"
    cidr_block = aws_vpc.main.cidr_block
    from_port  = 0
    to_port    = 0
  }

  egress {
    protocol   = "-1"
    rule_no    = 100
    action     = "allow"
    cidr_block = "0.0.0.0/0"
    from_port  = 0
    to_port    = 0
  }

  tags = {
    Name = "${local.name}-private"
  }
}

# The web tier's group and the app tier's, their rules as resources of
# their own: a rule added out of band is not this root's to take away.
resource "aws_security_group" "web" {
  name        = "${local.name}-web"
  description = "Web tier"
  vpc_id      = aws_vpc.main.id

  tags = {
    Name = "${local.name}-web"
  }
}

resource "aws_vpc_security_group_ingress_rule" "web_https" {
  security_group_id = aws_security_group.web.id
  description       = "HTTPS from anywhere"
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
}

resource "aws_vpc_security_group_egress_rule" "web_all" {
  security_group_id = aws_security_group.web.id
  description       = "Anything out"
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "-1"
}

resource "aws_security_group" "app" {
  name        = "${local.name}-app"
  description = "App tier"
  vpc_id      = aws_vpc.main.id

  tags = {
    Name = "${local.name}-app"
  }
}

resource "aws_vpc_security_group_ingress_rule" "app_from_vpc" {
  security_group_id = aws_security_group.app.id
  description       = "App port from inside the VPC"
  cidr_ipv4         = aws_vpc.main.cidr_block
  ip_protocol       = "tcp"
  from_port         = 8080
  to_port           = 8080
}

resource "aws_vpc_security_group_egress_rule" "app_all" {
  security_group_id = aws_security_group.app.id
  description       = "Anything out"
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "-1"
}

# Two groups with inline rules, which nothing else refers to.
resource "aws_security_group" "bastion" {
  name        = "${local.name}-bastion"
  description = "SSH from the office"
  vpc_id      = aws_vpc.main.id

  ingress {
    description = "SSH from the office"
    protocol    = "tcp"
    from_port   = 22
    to_port     = 22
    cidr_blocks = ["203.0.113.0/24"]
  }

  egress {
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    cidr_blocks = ["0.0.0.0/0"]
  }

  tags = {
    Name = "${local.name}-bastion"
  }
}

resource "aws_security_group" "monitoring" {
  name        = "${local.name}-monitoring"
  description = "Metrics scrapes from inside the VPC"
  vpc_id      = aws_vpc.main.id

  ingress {
    description = "Prometheus"
    protocol    = "tcp"
    from_port   = 9100
    to_port     = 9100
    cidr_blocks = [aws_vpc.main.cidr_block]
  }

  tags = {
    Name = "${local.name}-monitoring"
  }
}

resource "aws_kms_key" "logs" {
  description             = "${local.name} flow logs"
  deletion_window_in_days = 7
  enable_key_rotation     = true

  tags = {
    Name = "${local.name}-logs"
  }
}

resource "aws_kms_alias" "logs" {
  name          = "alias/${local.name}-logs"
  target_key_id = aws_kms_key.logs.key_id
}

resource "aws_cloudwatch_log_group" "flow" {
  name              = "/${local.name}/vpc-flow"
  retention_in_days = 14
  kms_key_id        = aws_kms_key.logs.arn

  tags = {
    Name = "${local.name}-flow"
  }
}

resource "aws_iam_role" "flow" {
  name = "${local.name}-flow-log"

  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "vpc-flow-logs.amazonaws.com" }
      Action    = "sts:AssumeRole"
      Condition = { StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id } }
    }]
  })

  tags = {
    Name = "${local.name}-flow-log"
  }
}

resource "aws_iam_role_policy" "flow" {
  name = "write-flow-logs"
  role = aws_iam_role.flow.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"]
      Resource = "${aws_cloudwatch_log_group.flow.arn}:*"
    }]
  })
}

resource "aws_flow_log" "vpc" {
  vpc_id               = aws_vpc.main.id
  traffic_type         = "ALL"
  log_destination_type = "cloud-watch-logs"
  log_destination      = aws_cloudwatch_log_group.flow.arn
  iam_role_arn         = aws_iam_role.flow.arn

  tags = {
    Name = local.name
  }
}

# What other roots read.
resource "aws_ssm_parameter" "vpc_id" {
  name  = "/${local.name}/vpc/id"
  type  = "String"
  value = aws_vpc.main.id
}

resource "aws_ssm_parameter" "nat_public_ip" {
  name  = "/${local.name}/nat/public-ip"
  type  = "String"
  value = aws_eip.nat.public_ip
}

resource "aws_ssm_parameter" "private_subnet" {
  count = 3

  name  = "/${local.name}/subnets/private/${count.index}"
  type  = "String"
  value = aws_subnet.private[count.index].id
}

output "vpc_id" {
  value = aws_vpc.main.id
}

output "private_subnet_ids" {
  value = aws_subnet.private[*].id
}

output "endpoint_ids" {
  value = module.endpoints.ids
}
