"""The console: the relay's own page at ``/``, its scripts and styles, served from this
package with a strict Content-Security-Policy."""
