"""Key rotation for the fields encrypted at rest (`api.crypto`, DESIGN.md 8): card PANs and
CVVs, customers' national ids, webhook endpoints' signing secrets. (Idempotency records that
hold a secret shown once are encrypted too; they are purged after 24 hours, so an old key must
stay in the setting for a day after the rotation.)

To rotate, put a new key first in FIELD_ENCRYPTION_KEYS (the old ones stay after it, so stored
values still decrypt), deploy, then run `reencrypt_sensitive_data`: every value whose key id is
not the newest is decrypted and encrypted again under the newest key, with the same associated
data. Once nothing is left under an old key, that key can leave the setting.

Only the ciphertext columns change: the PAN fingerprint (a keyed hash under its own key, which
never rotates), the clear first six/last four digits and `updated_at` stay as they are, and no
event is emitted (nothing about the card or the customer changed). Rows are taken in batches,
each its own transaction, with SKIP LOCKED: a run never waits for a card in use, and two runs
never re-encrypt the same row at once. A row locked at that moment is left for the next run
(`remaining` counts them). A second run changes nothing. Plaintexts never leave this module.
"""

from collections.abc import Callable
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Q, QuerySet

from cards.models import Card
from customers.models import Customer
from webhooks.models import WebhookEndpoint

from . import crypto


@dataclass
class ReencryptionReport:
    key_id: str  # the newest key: every value re-encrypted is under it
    cards: int = 0  # cards whose PAN and CVV were re-encrypted (or would be, in a dry run)
    customers: int = 0  # customers whose national id was re-encrypted (or would be)
    webhook_endpoints: int = 0  # endpoints whose signing secret was re-encrypted (or would be)
    remaining: int = 0  # values still under an older key afterwards (rows in use: run again)
    dry_run: bool = False


def sensitive_data_reencrypt(
    *,
    dry_run: bool = False,
    batch_size: int = 500,
    on_progress: Callable[[int, int], None] | None = None,
) -> ReencryptionReport:
    """Re-encrypt under the newest key every card PAN/CVV and customer national id stored under
    an older one. `dry_run` only counts them. `on_progress(done, total)` is called after each
    row. Raises ImproperlyConfigured when a value does not decrypt (its key is no longer in
    FIELD_ENCRYPTION_KEYS, or it was tampered with): that batch is rolled back."""
    key_id = crypto.current_key_id()
    cards, customers = _stale_cards(key_id), _stale_customers(key_id)
    endpoints = _stale_endpoints(key_id)
    report = ReencryptionReport(key_id=key_id, dry_run=dry_run)
    counts = cards.count(), customers.count(), endpoints.count()
    if dry_run:
        report.cards, report.customers, report.webhook_endpoints = counts
        return report
    total = sum(counts)
    done = 0

    def step():
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, total)

    report.cards = _in_batches(cards, _reseal_card, batch_size, step)
    report.customers = _in_batches(customers, _reseal_customer, batch_size, step)
    report.webhook_endpoints = _in_batches(endpoints, _reseal_endpoint, batch_size, step)
    report.remaining = (
        _stale_cards(key_id).count()
        + _stale_customers(key_id).count()
        + _stale_endpoints(key_id).count()
    )
    return report


def _stale_cards(key_id: str) -> QuerySet:
    current = f"{key_id}:"
    return Card.objects.filter(
        ~Q(pan_encrypted__startswith=current) | ~Q(cvv_encrypted__startswith=current)
    )


def _stale_customers(key_id: str) -> QuerySet:
    return Customer.objects.filter(national_id_encrypted__isnull=False).exclude(
        national_id_encrypted__startswith=f"{key_id}:"
    )


def _stale_endpoints(key_id: str) -> QuerySet:
    return WebhookEndpoint.objects.exclude(secret_encrypted__startswith=f"{key_id}:")


def _in_batches(stale: QuerySet, reseal: Callable, batch_size: int, step: Callable) -> int:
    """Reseal the rows of `stale`, `batch_size` at a time, each batch a transaction; walk them
    by primary key so that a row skipped (locked) does not come back in this run."""
    changed = 0
    after = ""
    while True:
        with transaction.atomic(durable=True):
            batch = list(
                stale.select_for_update(skip_locked=True, of=("self",))
                .filter(pk__gt=after)
                .order_by("pk")[:batch_size]
            )
            for row in batch:
                reseal(row)
                changed += 1
                step()
        if len(batch) < batch_size:
            return changed
        after = batch[-1].pk


def _reseal_card(card: Card) -> None:
    try:
        pan, cvv = card.pan(), card.cvv()
    except (InvalidTag, ImproperlyConfigured) as error:
        raise _undecryptable("Card", card.pk, error) from None
    fingerprint = card.pan_fingerprint
    card.seal(pan=pan, cvv=cvv)
    if card.pan_fingerprint != fingerprint:
        # PAN_FINGERPRINT_KEY changed: saving would break lookups; nothing to do with rotation.
        raise ImproperlyConfigured(
            f"Card {card.pk}: its PAN fingerprint does not match PAN_FINGERPRINT_KEY."
        )
    card.save(update_fields=["pan_encrypted", "cvv_encrypted"])


def _reseal_customer(customer: Customer) -> None:
    try:
        national_id = customer.national_id()
    except (InvalidTag, ImproperlyConfigured) as error:
        raise _undecryptable("Customer", customer.pk, error) from None
    customer.set_national_id(national_id)
    customer.save(update_fields=["national_id_encrypted"])


def _reseal_endpoint(endpoint: WebhookEndpoint) -> None:
    try:
        secret = endpoint.secret()
    except (InvalidTag, ImproperlyConfigured) as error:
        raise _undecryptable("WebhookEndpoint", endpoint.pk, error) from None
    endpoint.seal(secret)
    endpoint.save(update_fields=["secret_encrypted"])


def _undecryptable(model: str, pk: str, error: Exception) -> ImproperlyConfigured:
    reason = str(error) if isinstance(error, ImproperlyConfigured) else "authentication failed"
    return ImproperlyConfigured(f"{model} {pk}: a stored value does not decrypt ({reason}).")
