"""What the HTTP shell asks of every feature: a route, and the feature protocol."""
