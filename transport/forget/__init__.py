"""Forgetting and exporting a time range over HTTP: ``POST /privacy/forget``, ``GET /export``."""
