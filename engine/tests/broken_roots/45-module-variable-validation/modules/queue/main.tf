variable "name" {
  type = string
}

variable "delay" {
  type    = number
  default = 0

  validation {
    condition     = var.delay >= 0
    error_message = "The delay must not be negative."
  }
}
