"""The HTTP handlers, by resource: ingest, agent, health, meta."""
