resource "aws_ssm_parameter" "shard" {
  count = 2
  name  = "/shop/shard/${count.index}"
  type  = "String"
  value = "v1"
}
