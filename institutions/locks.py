"""The row locks of institutions' API keys (docs/design.md section 2; the order: docs/money.md,
"Locking"). A key is locked alone, by the change that reads and writes it."""

from django.contrib.auth import get_user_model

from .models import ApiKey


def lock_api_key(api_key_id: str) -> ApiKey:
    """The key, its row locked (FOR UPDATE) until the transaction ends: revoked, rotated or
    given new scopes by one change at a time."""
    return ApiKey.objects.select_for_update().get(pk=api_key_id)


def lock_api_key_for_counting(api_key_id: str) -> ApiKey:
    """The key with its institution, its row only locked FOR NO KEY UPDATE until the
    transaction ends: the key's failed PAN resolutions are counted one at a time
    (`cards.services.pan_guard`), while rows that reference the key (a request's idempotency
    record, a failure) can still be written: they take FOR KEY SHARE, which this lock lets
    through."""
    return (
        ApiKey.objects.select_for_update(no_key=True, of=("self",))
        .select_related("institution")
        .get(pk=api_key_id)
    )


def lock_staff_user_for_counting(user_id: int):
    """The staff user's row only, locked FOR NO KEY UPDATE until the transaction ends: what is
    counted per staff user (card numbers missed in the search, `cards.services.pan_guard`;
    changes of money made alone, `backoffice.services.staff_changes`) is counted one at a time,
    while the rows that reference the user (the counted rows themselves) can still be written."""
    return get_user_model().objects.select_for_update(no_key=True).get(pk=user_id)
