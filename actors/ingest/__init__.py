"""The ingest feature's actors: the feed and sense buffers and the ring they share."""
