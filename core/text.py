"""What no single-line text the service stores may hold (names, addresses, descriptions,
reasons, client metadata): they end up in card-network messages, statements, log lines and
admin pages. `api.serializers` refuses them in every text field of the API; `core.metadata` in
metadata keys and values."""

import re

# C0 controls (NUL, TAB, CR and LF included), DEL and C1 controls; lone surrogates (not Unicode
# text: PostgreSQL cannot store them); the line and paragraph separators; the bidirectional
# embedding, override and isolate controls, which reorder what a reader sees ("Trojan source").
FORBIDDEN_CHARACTERS = re.compile(
    r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
CONTROL_CHARACTER_MESSAGE = (
    "Must not contain control characters (such as NUL, tab or a line break)."
)
