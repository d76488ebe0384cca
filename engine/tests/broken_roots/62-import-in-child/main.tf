module "queue" {
  source = "./modules/queue"
}
