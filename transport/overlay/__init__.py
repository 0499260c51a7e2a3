"""The overlay feature over HTTP: the HUD's WebSocket, its protocol and its status."""
