module "queue" {
  source = "./modules/queue"
  name   = module.queue.name
}
