locals {
  regions = toset(["eu", "us"])
}

resource "aws_ssm_parameter" "region" {
  for_each = local.regions
  name     = "/shop/region/${each.key}"
  type     = "String"
  value    = each.key
}

import {
  for_each = local.regions
  to       = aws_ssm_parameter.region[each.key]
  id       = "/shop/region/${each.key}"
}
