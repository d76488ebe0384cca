# The engine's settings for this estate. Stock terraform loads only .tf and
# .tf.json files, so this file leaves the root plain terraform.
live {
  estate = "reference-aws-network"
}
