resource "aws_s3_bucket" "b" {
  bucket = "b"

  encryption {
    index_document = "index.html"
  }
}
