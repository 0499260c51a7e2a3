"""The privacy feature's actor: the owner of the runtime privacy controls."""
