"""The privacy feature's HTTP side: ``GET``/``POST /privacy`` and ``/health.privacy``."""
