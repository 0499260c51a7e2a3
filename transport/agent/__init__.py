"""The agent feature over HTTP: its routes, and what /health and /metrics say of redaction and
of the screen images calls send."""
