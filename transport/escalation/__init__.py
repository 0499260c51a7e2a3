"""The escalation feature over HTTP: its routes, its answers, its health and metric families."""
