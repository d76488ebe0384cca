resource "aws_s3_bucket" "assets" {
  bucket = "shop-assets"
}

resource "aws_s3_bucket_accelerate_configuration" "assets" {
  bucket = aws_s3_bucket.assets.id
  status = "Enabled"
}
