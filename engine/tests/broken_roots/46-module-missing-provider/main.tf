provider "aws" {
  region = "us-east-1"
}

module "queue" {
  source = "./modules/queue"
  providers = {
    aws = aws.west
  }
}
