module "queue" {
  source = "./modules/queue"
  name   = "jobs"
}

output "arn" {
  value = module.queue.arn
}
