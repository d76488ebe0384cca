output "name" {
  value = var.name
}
