module "param" {
  source = "./modules/param"
  name   = "/shop/inner"
}

import {
  to = module.param.aws_ssm_parameter.this
  id = "/shop/inner"
}
