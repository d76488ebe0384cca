variable "n" {
  default = 1
}

check "constant" {
  assert {
    condition     = 1 == 1
    error_message = "never"
  }
}

check "empty" {
  data "aws_region" "r" {
    count = 1
  }

  data "aws_region" "again" {}
}

check "constant" {
  assert {
    condition     = var.n > 0
    error_message = "n must be positive"
  }
}
