"""Card secrets: PAN generation and fingerprint, CVV generation, PIN hashing.

The PAN fingerprint is HMAC-SHA256 under PAN_FINGERPRINT_KEY: without the key, a database dump
cannot be searched for a known PAN. A PIN is stored as `salt$HMAC-SHA256(PIN_KEY, salt || pin)`:
four digits have only 10,000 values, so an unkeyed hash would fall to enumeration; the salt can be
copied with the hash to a renewed or replacing card, so the PIN carries over.
"""

import hashlib
import hmac
import secrets

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from stdnum import luhn


def _key(name: str) -> bytes:
    value = getattr(settings, name, "")
    if not value:
        raise ImproperlyConfigured(f"{name} is not set.")
    return value.encode()


def new_pan(bin: str, length: int) -> str:
    """`bin`, random digits, and a Luhn check digit: `length` digits."""
    body = bin + "".join(str(secrets.randbelow(10)) for _ in range(length - len(bin) - 1))
    return body + luhn.calc_check_digit(body)


def new_cvv() -> str:
    return f"{secrets.randbelow(1000):03d}"


def pan_fingerprint(pan: str) -> str:
    return hmac.new(_key("PAN_FINGERPRINT_KEY"), pan.encode(), hashlib.sha256).hexdigest()


def pin_hash(pin: str) -> str:
    salt = secrets.token_hex(16)
    return f"{salt}${_pin_digest(salt, pin)}"


def pin_matches(stored: str, pin: str) -> bool:
    salt, _, digest = stored.partition("$")
    return hmac.compare_digest(digest, _pin_digest(salt, pin))


def _pin_digest(salt: str, pin: str) -> str:
    return hmac.new(_key("PIN_KEY"), f"{salt}{pin}".encode(), hashlib.sha256).hexdigest()
