"""What the patterns of redaction's rules are made of: the characters of keys, credentials and
URLs, and the projection of a text that finds the words a key may stand in.

The rules themselves, one row per secret, are the table of :mod:`.rules`.
"""

from __future__ import annotations

import re
import string

KEY = "A-Za-z0-9_-"
"""Characters of base64url-like keys."""
CRED = "A-Za-z0-9._~+/-"
"""Characters of an HTTP credential (RFC 9110 token68, less the trailing ``=``)."""
PEM_LINE = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
NOT_A_VALUE = (
    r"(?:str|string|bytes|int|bool|none|null|nil|undefined|true|false|optional|secretstr)\b"
)
"""What follows ``password:`` in code when it is a type or an empty value, not a password."""
URL_USERINFO = "A-Za-z0-9._~%!$&()*+,;="
"""Characters of a URL's user name or password as written (RFC 3986, less ``'``, which is
more often a quote around the URL)."""


def compiled(pattern: str) -> re.Pattern[bytes]:
    """``pattern`` compiled over bytes, ``.`` matching line ends too."""
    return re.compile(pattern.encode(), re.DOTALL)


KEY_BYTES = f"{string.ascii_letters}{string.digits}_-".encode()
SHAPES = bytes(
    0x61 if b in KEY_BYTES or b in b"\t\n\r" else 0x20 if b in b" \f\v" else 0x2E
    for b in range(256)
)
"""Turns key characters (ASCII letters, digits, ``_``, ``-``) into ``a``, and line ends and
tabs too (where a key may have been split: see :mod:`.key_joins`);
other whitespace (what ``\\s`` matches in bytes) into a space and any other byte into
``.``."""
SPLIT = re.compile(rb"\r?\n|\t| ")
"""What may split a key: a line end (where OCR and editors wrap a long key), a tab (a
no-break or other Unicode space, in the view) or one space."""
RUN = re.compile(rb"[A-Za-z0-9_-]*")
"""A run of key characters."""
KEY_RUN = 20
"""The fewest key characters in a row that every key in a word of its own holds (an AWS key
id has exactly 20; the others more): see
:func:`.rules._key_words`."""
KEY_RUN_SHAPE = b"a" * KEY_RUN
