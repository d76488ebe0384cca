live {
  estate = "shop"

  strict {
    secrets          = "refuse"
    no_source_create = "refuse"
    marker_repair    = "never"
  }
}
