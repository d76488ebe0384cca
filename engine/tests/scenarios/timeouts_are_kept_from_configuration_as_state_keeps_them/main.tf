resource "aws_dynamodb_table" "sessions" {
  name         = "shop-sessions"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"

  attribute {
    name = "id"
    type = "S"
  }

  tags = { team = "shop" }

  timeouts {
    create = "20m"
    delete = "20m"
  }
}
