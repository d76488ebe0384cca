module "queue" {
  source = "./modules/queue"
  count  = 2
  name   = "jobs-${count.index}"
}

output "name" {
  value = module.queue.name
}
