"""Field encryption at rest: AES-256-GCM with a key id, for rotation (docs/design.md section 8).

FIELD_ENCRYPTION_KEYS is "kid:base64key[,kid:base64key...]", newest first. A value is stored as
`kid:base64(nonce || ciphertext+tag)`; it is encrypted under the newest key and decrypted with
the key its id names, so old values stay readable until they are re-encrypted. The associated
data binds a ciphertext to its column: a value copied into another column does not decrypt.
"""

import base64
import os
from functools import lru_cache

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


@lru_cache(maxsize=4)
def _keys(spec: str) -> tuple[tuple[str, AESGCM], ...]:
    keys = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        kid, _, encoded = item.partition(":")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except ValueError:
            raw = b""
        if not kid or len(raw) != 32:
            raise ImproperlyConfigured(
                "FIELD_ENCRYPTION_KEYS must be 'kid:base64 of 32 bytes', comma-separated."
            )
        keys.append((kid, AESGCM(raw)))
    if not keys:
        raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS is not set.")
    return tuple(keys)


def current_key_id() -> str:
    return _keys(settings.FIELD_ENCRYPTION_KEYS)[0][0]


def encrypt(plaintext: str, *, context: str) -> str:
    kid, aead = _keys(settings.FIELD_ENCRYPTION_KEYS)[0]
    nonce = os.urandom(12)
    sealed = aead.encrypt(nonce, plaintext.encode(), context.encode())
    return f"{kid}:{base64.b64encode(nonce + sealed).decode()}"


def decrypt(stored: str, *, context: str) -> str:
    kid, _, encoded = stored.partition(":")
    for candidate, aead in _keys(settings.FIELD_ENCRYPTION_KEYS):
        if candidate == kid:
            blob = base64.b64decode(encoded)
            return aead.decrypt(blob[:12], blob[12:], context.encode()).decode()
    raise ImproperlyConfigured(f"No key with id '{kid}' in FIELD_ENCRYPTION_KEYS.")


def key_id_of(stored: str) -> str:
    return stored.partition(":")[0]
