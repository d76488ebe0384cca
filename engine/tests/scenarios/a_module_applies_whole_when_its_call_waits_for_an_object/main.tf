resource "aws_sqs_queue" "events" {
  name = "shop-events"
}

module "feed" {
  source = "./modules/feed"
  queue  = aws_sqs_queue.events.url
}
