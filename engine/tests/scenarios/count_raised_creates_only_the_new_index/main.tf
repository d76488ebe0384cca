resource "aws_ssm_parameter" "shard" {
  count = 3
  name  = "/shop/shard/${count.index}"
  type  = "String"
  value = "shard ${count.index}"
}
