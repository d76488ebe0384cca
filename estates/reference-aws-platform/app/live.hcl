# The engine's settings for the app estate, a second estate on the same
# live system as reference-aws-platform.
live {
  estate = "reference-aws-platform-app"
}
