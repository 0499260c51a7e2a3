"""The relay's actors, their supervisor, and the pure functions they are shells around.

Import what you need from the module that defines it: this package imports nothing, so that
importing the kernel or a pure function loads no actor.
"""
