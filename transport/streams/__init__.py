"""What every feature's streams share: hubs, their subscribers, Server-Sent Events and the
fan-out of what the actors publish."""
