resource "aws_dynamodb_tag" "owner" {
  resource_arn = "arn:aws:dynamodb:us-east-1:123456789012:table/billing-sessions"
  key          = "tofu-estate"
  value        = "shop"
}
