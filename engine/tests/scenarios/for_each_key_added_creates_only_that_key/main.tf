variable "regions" {
  type    = set(string)
  default = ["eu", "us"]
}

resource "aws_ssm_parameter" "region" {
  for_each = var.regions
  name     = "/shop/region/${each.key}"
  type     = "String"
  value    = each.key
}
