module "queue" {
  source  = "./modules/queue"
  version = "1.0.0"
}
