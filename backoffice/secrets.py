"""The second factor's secrets, made and checked here and stored only as this module stores
them (docs/back-office.md, "Signing in"):

- **Enrolment tokens**: 20 base32 characters (100 random bits), shown once as `ABCD-EFGH-...`.
  Stored as their SHA-256: a hash without salt or key is enough for a random value of 100 bits
  (a copy of the database would have to try 2^99 values on average), and the token works for at
  most 24 hours, once.
- **Recovery codes**: 8 base32 characters (40 random bits), as django-otp made them. Stored as
  `HMAC-SHA256(STAFF_RECOVERY_CODE_KEY, salt || code)` with 16 random bytes of salt per code.
  40 bits alone would fall to a plain hash (2^40 SHA-256 take minutes on one GPU), and a slow
  hash would make every sign-in with a code slow (ten codes to try, one salt each). Keyed, a copy
  of the database cannot test a single guess; checking a code costs ten HMACs, microseconds.
- **Authenticator-app keys** (TOTP seeds): 20 random bytes, as django-otp made them, encrypted
  with the field keys (`backoffice.models.AppDevice.seal`).

Nothing here logs or returns a secret beyond the value it makes.
"""

import hashlib
import hmac
import os
import re
from base64 import b32encode
from secrets import choice

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

TOKEN_LENGTH = 20  # base32 characters of 5 bits: 100 bits
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
RECOVERY_CODE_BYTES = 5  # 8 base32 characters
APP_KEY_BYTES = 20
_SEPARATORS = re.compile(r"[\s-]+")


def enrolment_token_new() -> str:
    """A new enrolment token, grouped by four for reading aloud: `ABCD-EFGH-IJKL-MNOP-QRST`."""
    raw = "".join(choice(BASE32) for _ in range(TOKEN_LENGTH))
    return "-".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def enrolment_token_digest(token: str) -> str:
    """The stored form of a token, as typed (any case, with or without its dashes)."""
    return hashlib.sha256(_SEPARATORS.sub("", token).upper().encode()).hexdigest()


def recovery_code_new() -> str:
    return b32encode(os.urandom(RECOVERY_CODE_BYTES)).decode().lower()


def recovery_code_hash(code: str) -> tuple[str, str]:
    """(salt, digest) of a recovery code, to be stored in place of the code."""
    salt = os.urandom(16).hex()
    return salt, _recovery_code_digest(salt, code)


def recovery_code_matches(code: str, *, salt: str, digest: str) -> bool:
    """Whether `code` (as typed) is the one stored as `salt` and `digest`; constant time."""
    return hmac.compare_digest(_recovery_code_digest(salt, code), digest)


def app_key_new() -> str:
    """A new authenticator-app key, in hex (as django-otp's TOTP devices keep it)."""
    return os.urandom(APP_KEY_BYTES).hex()


def _recovery_code_digest(salt: str, code: str) -> str:
    key = settings.STAFF_RECOVERY_CODE_KEY
    if not key:
        raise ImproperlyConfigured("STAFF_RECOVERY_CODE_KEY is not set.")
    normalized = _SEPARATORS.sub("", code).lower()
    return hmac.new(key.encode(), f"{salt}{normalized}".encode(), hashlib.sha256).hexdigest()
