variable "name" {
  type    = string
  default = "d"
}

output "name" {
  value = var.name
}
