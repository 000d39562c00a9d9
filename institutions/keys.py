"""API key secrets: generation, hashing, and the split of a presented key into prefix and secret.

A key looks like `tx_<prefix>_<secret>`: the prefix (10 base32 characters) is public and indexed,
the secret (43 URL-safe characters, 256 bits) is only ever stored as its SHA-256.
"""

import hashlib
import hmac
import secrets

from core.ids import _ALPHABET

KEY_PREFIX = "tx"


def generate() -> tuple[str, str, str]:
    """Return (full key to show once, public prefix, hash of the secret)."""
    prefix = "".join(secrets.choice(_ALPHABET) for _ in range(10)).lower()
    secret = secrets.token_urlsafe(32)
    return f"{KEY_PREFIX}_{prefix}_{secret}", prefix, hash_secret(secret)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def split(presented: str) -> tuple[str, str] | None:
    """(prefix, secret) of a presented key, or None when it does not have the key's shape."""
    parts = presented.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)
