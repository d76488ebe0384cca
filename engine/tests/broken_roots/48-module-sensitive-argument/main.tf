module "app" {
  source   = "./modules/app"
  for_each = { blue = 1, green = 2 }
  size     = each.value
}

resource "aws_sqs_queue" "top" {
  name = module.app["blue"].queue_name
}

output "x" {
  value = module.app["blue"].nope
}
