module "queue" {
  source = "./modules/queue"

  for_each = toset(["a"])
}
