resource "aws_sns_topic" "alerts" {
  name = "shop-alerts"
}

resource "aws_sns_topic_subscription" "oncall" {
  topic_arn = aws_sns_topic.alerts.arn
  protocol  = "email"
  endpoint  = "oncall@example.com"
}

moved {
  from = aws_sns_topic_subscription.pager
  to   = aws_sns_topic_subscription.oncall
}
