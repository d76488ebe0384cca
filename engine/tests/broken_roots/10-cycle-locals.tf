locals {
  a = "${local.b}-x"
  b = "${local.a}-y"
}
