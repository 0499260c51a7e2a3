"""``sinain-relay doctor``: checks that what is configured works, each verdict naming the
setting to fix."""
