"""The audio feature's settings: its sources and its speech service."""
