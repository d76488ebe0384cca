terraform {
  provider_meta "aws" {
    module_name = var.name
  }

  provider_meta "aws" {
    version = upper("x")
  }
}

variable "name" {
  default = "x"
}
