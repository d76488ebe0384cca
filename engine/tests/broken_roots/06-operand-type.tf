locals {
  size = "large" + 1
}
