provider "aws" {
  region = "us-east-1"
  regoin = "us-east-1"
}
