"""Key rotation for the fields encrypted at rest (`core.crypto`, docs/design.md section 8): card
PANs and CVVs, customers' national ids, webhook and decisioning endpoints' signing secrets,
idempotency records' stored responses, staff authenticator apps' keys, and the account numbers
and IBANs of payments (external accounts, inbound entries).

To rotate, put a new key first in FIELD_ENCRYPTION_KEYS (the old ones stay after it, so stored
values still decrypt), deploy, then run `reencrypt_sensitive_data`: every value whose key id is
not the newest is decrypted and encrypted again under the newest key, with the same associated
data. Once nothing is left under an old key, that key can leave the setting.

Only the ciphertext columns change: the PAN fingerprint (a keyed hash under its own key, which
never rotates), the clear first six/last four digits and `updated_at` stay as they are, and no
event is emitted (nothing about the card or the customer changed). Rows are taken in batches,
each its own transaction, with SKIP LOCKED: a run never waits for a card in use, and two runs
never re-encrypt the same row at once. A row locked at that moment is left for the next run
(`remaining` counts them). A second run changes nothing. Plaintexts never leave the reseal
functions.

Each app that stores encrypted fields registers them here (`register`, from its AppConfig.ready):
which rows are stale under the newest key, and how to reseal one row. This module knows none of
those apps; the report counts rows per registered name.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import QuerySet

from core import crypto
from core.locks import lock_free_batch


@dataclass(frozen=True)
class EncryptedRows:
    """One kind of row with encrypted fields, as an app registers it."""

    name: str  # in the report: "cards", "customers", "webhook_endpoints"
    describe: str  # for people, with {n}: "{n} card(s) (PAN and CVV)"
    stale: Callable[[str], QuerySet]  # rows with a value under a key other than this key id
    reseal: Callable[[object], None]  # decrypt and encrypt again under the newest key, and save


_REGISTERED: dict[str, EncryptedRows] = {}


def register(rows: EncryptedRows) -> None:
    _REGISTERED[rows.name] = rows


def registered() -> list[EncryptedRows]:
    """In the order of their names (whatever order the apps registered them in)."""
    return [_REGISTERED[name] for name in sorted(_REGISTERED)]


@dataclass
class ReencryptionReport:
    key_id: str  # the newest key: every value re-encrypted is under it
    # Rows re-encrypted (or that would be, in a dry run), per registered name.
    counts: dict[str, int] = field(default_factory=dict)
    remaining: int = 0  # values still under an older key afterwards (rows in use: run again)
    dry_run: bool = False

    def summary(self) -> str:
        parts = [rows.describe.format(n=self.counts.get(rows.name, 0)) for rows in registered()]
        return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def sensitive_data_reencrypt(
    *,
    dry_run: bool = False,
    batch_size: int = 500,
    on_progress: Callable[[int, int], None] | None = None,
) -> ReencryptionReport:
    """Re-encrypt under the newest key every registered value stored under an older one.
    `dry_run` only counts them. `on_progress(done, total)` is called after each row. Raises
    ImproperlyConfigured when a value does not decrypt (its key is no longer in
    FIELD_ENCRYPTION_KEYS, or it was tampered with): that batch is rolled back."""
    key_id = crypto.current_key_id()
    report = ReencryptionReport(key_id=key_id, dry_run=dry_run)
    kinds = registered()
    counts = {rows.name: rows.stale(key_id).count() for rows in kinds}
    if dry_run:
        report.counts = counts
        return report
    total = sum(counts.values())
    done = 0

    def step():
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, total)

    for rows in kinds:
        report.counts[rows.name] = _in_batches(rows.stale(key_id), rows.reseal, batch_size, step)
    report.remaining = sum(rows.stale(key_id).count() for rows in kinds)
    return report


def _in_batches(stale: QuerySet, reseal: Callable, batch_size: int, step: Callable) -> int:
    """Reseal the rows of `stale`, `batch_size` at a time, each batch a transaction; walk them
    by primary key so that a row skipped (locked) does not come back in this run."""
    changed = 0
    after = None  # primary keys are strings or integers: no value is below every one of both
    while True:
        with transaction.atomic(durable=True):
            rows = stale if after is None else stale.filter(pk__gt=after)
            batch = lock_free_batch(rows, batch_size)
            for row in batch:
                reseal(row)
                changed += 1
                step()
        if len(batch) < batch_size:
            return changed
        after = batch[-1].pk


def decrypting(row, read: Callable):
    """`read()` (a row's decryption), or ImproperlyConfigured naming the row when it fails."""
    try:
        return read()
    except (InvalidTag, ImproperlyConfigured) as error:
        reason = str(error) if isinstance(error, ImproperlyConfigured) else "authentication failed"
        raise ImproperlyConfigured(
            f"{type(row).__name__} {row.pk}: a stored value does not decrypt ({reason})."
        ) from None
