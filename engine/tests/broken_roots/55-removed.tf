removed {
  from = aws_sqs_queue.q[0]
}

removed {
  from = data.aws_region.r
}

removed {
  from = module.net["a"]
}

removed {
  from = "aws_sqs_queue.q"
}

removed {
  from = module.net

  provisioner "local-exec" {
    when    = destroy
    command = "true"
  }
}
