module "network" {
  source = "./modules/net"
  cidr   = "10.0.0.0/16"
}

moved {
  from = module.net
  to   = module.network
}
