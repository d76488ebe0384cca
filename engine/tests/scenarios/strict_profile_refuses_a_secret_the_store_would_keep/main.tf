variable "force_destroy" {
  type      = bool
  default   = true
  sensitive = true
}

resource "aws_s3_bucket" "assets" {
  bucket        = "shop-assets"
  force_destroy = var.force_destroy
}
