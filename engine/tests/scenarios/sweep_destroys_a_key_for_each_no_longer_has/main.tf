resource "aws_ssm_parameter" "region" {
  for_each = toset(["eu", "us"])
  name     = "/shop/region/${each.key}"
  type     = "String"
  value    = each.key
}
