variable "size" {
  type = number
}

module "queue" {
  source = "../queue"
  count  = var.size
  name   = { a = 1 }
}

output "queue_name" {
  value = module.queue[0].name
}
