"""The HTTP shell's shared parts: what its own routes, the features' handlers and the
composition root all use (the app keys and what they hold, each route's guard, the request's
inputs, the answers' structs, access, the bridge to the actors, the counters). Nothing here
names the composition root or a feature's HTTP package."""
