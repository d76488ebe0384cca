module "svc" {
  source   = "./modules/svc"
  for_each = toset(["api", "web"])
  name     = each.key
}
