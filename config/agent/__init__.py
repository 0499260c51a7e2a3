"""The agent feature's settings: its model and how it is asked, and its own model on this
machine."""
