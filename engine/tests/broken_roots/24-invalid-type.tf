variable "names" {
  type = list(strin)
}
