module "store" {
  source = "./modules/store"
}
