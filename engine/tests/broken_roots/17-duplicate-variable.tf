variable "name" {
  type = string
}

variable "name" {
  type = string
}
