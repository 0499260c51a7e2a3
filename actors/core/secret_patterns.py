"""The patterns of the secrets redaction looks for, and the literals each begins with.

Each pattern begins with a literal, so the regular-expression engine scans for that literal
at memchr-like speed; a word boundary before a key is a look-behind placed after the
literal. Patterns of case-insensitive names are written in lower case and searched in the
text's bytes lower-cased. :mod:`actors.core.redaction` applies them.
"""

from __future__ import annotations

import re
import string

# Each begins with a literal (see "Cost" above); a word boundary before a key is a look-behind
# placed after the literal. Those of case-insensitive names are written in lower case and
# searched in the text's bytes lower-cased (ASCII letters only, as re.ASCII | re.IGNORECASE
# would match them, but at the speed of a literal scan).

KEY = "A-Za-z0-9_-"
"""Characters of base64url-like keys."""
CRED = "A-Za-z0-9._~+/-"
"""Characters of an HTTP credential (RFC 9110 token68, less the trailing ``=``)."""
PEM_LINE = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
NOT_A_VALUE = (
    r"(?:str|string|bytes|int|bool|none|null|nil|undefined|true|false|optional|secretstr)\b"
)
"""What follows ``password:`` in code when it is a type or an empty value, not a password."""


def compiled(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode(), re.DOTALL)


PRIVATE = compiled(r"<private>.*?(?:</private>|\Z)")
PEM = compiled(rf"-----BEGIN {PEM_LINE}.*?(?:-----END {PEM_LINE}|\Z)")
SK = compiled(rf"sk-(?<![{KEY}]sk-)(?=[A-Za-z_-]*[0-9])[{KEY}]{{20,}}")
GITHUB = compiled(r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{30,}")
GITHUB_PAT = compiled(r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{30,}")
SLACK = compiled(r"xox[abprse]-(?<![A-Za-z0-9_-]xox[abprse]-)(?=[A-Za-z-]*[0-9])[A-Za-z0-9-]{10,}")
AWS = compiled(r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])")
JWT = compiled(rf"eyJ(?<![{KEY}]eyJ)[{KEY}]{{5,}}\.eyJ[{KEY}]{{5,}}\.[{KEY}]*")
BEARER = compiled(
    rf"bearer(?<!\wbearer)[ \t]+(?!\[redacted:)"
    rf"(?P<value>(?:(?=[{CRED}]*?[0-9])[{CRED}]{{8,}}|[{CRED}]{{20,}})=*)"
)
PASSWORD = compiled(
    r"pass(?:word|wd|phrase)[\"']?[ \t]*[=:][ \t]*(?P<quote>[\"'])?(?!\[redacted:)"
    r"(?P<value>(?(quote)(?:(?!(?P=quote))[^\n])+"
    rf"|(?!{NOT_A_VALUE})[^\s\"'`,;&=<>][^\s\"'`,;&<>]*))"
)
# Keys that vendors issue behind a prefix of their own, with the length and alphabet they give
# them (as gitleaks' and detect-secrets' rules have them); like ``sk-`` above, a key stands
# alone: no key character glued before its prefix, and none after its last character.
STRIPE = compiled(r"sk_(?<![A-Za-z0-9_]sk_)(?:live|test|prod)_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])")
STRIPE_RESTRICTED = compiled(
    r"rk_(?<![A-Za-z0-9_]rk_)(?:live|test|prod)_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])"
)
GITLAB = compiled(
    rf"gl(?<![{KEY}]gl)(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-[{KEY}]{{20,}}"
    rf"(?:\.[0-9a-z]{{9}}(?![{KEY}]))?"
)
NPM = compiled(r"npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9_])")
GOOGLE = compiled(rf"AIza(?<![{KEY}]AIza)[{KEY}]{{35}}(?![{KEY}])")
HUGGING_FACE = compiled(r"hf_(?<![A-Za-z0-9_]hf_)[A-Za-z0-9]{34,}(?![A-Za-z0-9_])")
SLACK_WEBHOOK = compiled(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<value>[A-Za-z0-9/]*[A-Za-z0-9]{24,})"
)
"""A Slack webhook's path, which is its credential: ``T.../B.../`` and a secret of 24 letters
or digits or more; the host stays."""
SENDGRID = compiled(rf"SG\.(?<![.{KEY}]SG\.)[{KEY}]{{22}}\.[{KEY}]{{43}}(?![{KEY}])")
TWILIO = compiled(r"SK(?<![A-Za-z0-9_]SK)[0-9a-fA-F]{32}(?![A-Za-z0-9_])")
SHOPIFY = compiled(r"shp(?<![A-Za-z0-9_]shp)(?:at|ss|ca|pa)_[0-9a-fA-F]{32}(?![A-Za-z0-9_])")
DIGITALOCEAN = compiled(r"do[opr]_v1_(?<![A-Za-z0-9_]do[opr]_v1_)[0-9a-f]{64}(?![A-Za-z0-9_])")
PYPI = compiled(rf"pypi-AgE(?<![{KEY}]pypi-AgE)[{KEY}]{{50,}}")
DATABRICKS = compiled(r"dapi(?<![A-Za-z0-9_]dapi)[0-9a-f]{32}(?:-[0-9])?(?![A-Za-z0-9_])")
TELEGRAM = compiled(rf":(?<=[0-9]{{8}}:)(?P<value>AA[{KEY}]{{32,33}})(?![{KEY}])")
"""A Telegram bot's token, ``<bot id>:AA...``: what follows the colon (which Telegram begins
with ``AA``) is the secret; the id before it stays."""
LINEAR = compiled(r"lin_api_(?<![A-Za-z0-9_]lin_api_)[A-Za-z0-9]{40}(?![A-Za-z0-9_])")
PERPLEXITY = compiled(rf"pplx-(?<![{KEY}]pplx-)[A-Za-z0-9]{{48}}(?![{KEY}])")
SENTRY = compiled(r"sntryu_(?<![A-Za-z0-9_]sntryu_)[0-9a-f]{64}(?![A-Za-z0-9_])")
AGE = compiled(rf"AGE-SECRET-KEY-1(?<![{KEY}]AGE-SECRET-KEY-1)[02-9AC-HJ-NP-Z]{{58}}(?![{KEY}])")
URL_USERINFO = "A-Za-z0-9._~%!$&()*+,;="
"""Characters of a URL's user name or password as written (RFC 3986, less ``'``, which is
more often a quote around the URL)."""
URL_PASSWORD = compiled(
    rf"://[{URL_USERINFO}-]*:(?P<value>[{URL_USERINFO}:@-]*[{URL_USERINFO}:-])(?=@)"
)
"""The password of ``scheme://user:password@host``, up to the last ``@`` before the path (the
way browsers read ``user:p@ss@host``); the scheme, the user and the host stay."""
SK_LITERAL = compiled("sk-")
GITHUB_LITERAL = compiled("gh[pousr]_")
SLACK_LITERAL = compiled("xox[abprse]-")
AWS_LITERAL = compiled("A[KS]IA")
JWT_LITERAL = compiled("eyJ")
PASSWORD_LITERAL = compiled("pass(?:w|phrase)")
URL_LITERAL = compiled("://")
"""The literals the patterns begin with: a compiled literal scans faster than ``in`` for
three or four bytes."""
KEY_BYTES = f"{string.ascii_letters}{string.digits}_-".encode()
SHAPES = bytes(
    0x61 if b in KEY_BYTES or b in b"\t\n\r" else 0x20 if b in b" \f\v" else 0x2E
    for b in range(256)
)
"""Turns key characters (ASCII letters, digits, ``_``, ``-``) into ``a``, and line ends and
tabs too (where a key may have been split: see ``_joins`` in :mod:`actors.core.redaction`);
other whitespace (what ``\\s`` matches in bytes) into a space and any other byte into
``.``."""
SPLIT = re.compile(rb"\r?\n|\t| ")
"""What may split a key: a line end (where OCR and editors wrap a long key), a tab (a
no-break or other Unicode space, in the view) or one space."""
RUN = re.compile(rb"[A-Za-z0-9_-]*")
"""A run of key characters."""
KEY_RUN = 20
"""The fewest key characters in a row that every key in a word of its own holds (an AWS key
id has exactly 20; the others more): see :func:`_key_words`."""
KEY_RUN_SHAPE = b"a" * KEY_RUN
