check "region" {
  data "aws_region" "r" {}

  assert {
    condition     = data.aws_region.r.name != ""
    error_message = "no region"
  }
}

output "region" {
  value = data.aws_region.r.name
}
