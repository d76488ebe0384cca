locals {
  name = upper("a", "b")
}
