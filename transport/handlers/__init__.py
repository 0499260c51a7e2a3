"""The shell's own handlers: /health and its stream, /metrics, the document, the fault drill,
the capture client's reports; and the parts that hand their routes to the registry."""
