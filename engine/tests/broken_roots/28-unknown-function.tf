locals {
  name = uppercase("a")
}
