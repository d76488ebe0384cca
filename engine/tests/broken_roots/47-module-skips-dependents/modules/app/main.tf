variable "size" {
  type = number
}

module "queue" {
  source = "../queue"
  count  = var.size
  name   = "q-${count.index}"
  extra  = true
}

output "queue_name" {
  value = module.queue[0].name
}
