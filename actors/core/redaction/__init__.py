"""Redaction: secrets and ``<private>`` text taken out of what users send before anything
stores, shows or sends it on. The rules, one row per kind of secret (:mod:`.rules`), the
patterns they are made of (:mod:`.patterns`), how a text is read (:mod:`.text_view`, keys
split by a line end joined again: :mod:`.key_joins`, card numbers: :mod:`.cards`), a text
redacted (:mod:`.text`), a client's JSON object (:mod:`.payload`), and the counting redactor
the transport holds (:mod:`.redactor`). It imports nothing else of the product."""
