resource "aws_dynamodb_table" "sessions" {
  name         = "shop-sessions"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"

  attribute {
    name = "id"
    type = "S"
  }

  tags = {
    app  = "shop"
    team = "checkout"
  }

  lifecycle {
    ignore_changes = [tags["owner"]]
  }
}
