module "queue" {
  source = "./modules/queue"
  name   = "meta"
}
