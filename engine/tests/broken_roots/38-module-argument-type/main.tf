module "queue" {
  source = "./modules/queue"
  name   = { first = "jobs" }
}
