"""The escalation feature: whether a moment deserves Sinain's agent, the message it reads, and
the slot where it waits. Pure logic; the digest store holds the slot."""
