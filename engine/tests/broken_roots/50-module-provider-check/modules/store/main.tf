resource "aws_s3_bucket" "b" {
  bucket        = "x"
  bucket_prefix = "y"
}
