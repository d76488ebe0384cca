output "url" {
  value = "a"
}

output "url" {
  value = "b"
}
