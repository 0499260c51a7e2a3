"""The ingest feature over HTTP: the feed's and the screen's routes."""
