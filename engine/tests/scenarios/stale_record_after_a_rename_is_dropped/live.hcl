live {
  estate = "shop"
}
