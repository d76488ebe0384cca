module "queue" {
  source = "./modules/queue"
  name   = "jobs"
  delay  = -1
}
