module "queue" {
  source = "./modules/queue"

  nme = "jobs"
}
