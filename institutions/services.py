"""Writes on tenants and their access: institutions, their calendars, API keys, allowlists.

The management commands, the admin and the tests all call these; nothing else changes these rows.
"""

import ipaddress
import json
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache, partial
from zoneinfo import available_timezones

import pycountry
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.exceptions import AlreadyExists, NotFound, ValidationFailed
from core.operations import Outcome, changed, unchanged
from institutions import key_cache, keys
from institutions import scopes as api_scopes
from institutions.locks import lock_api_key
from institutions.models import (
    ISO_WEEKDAYS,
    AllowedNetwork,
    ApiKey,
    Holiday,
    Institution,
    InstitutionAccess,
    default_weekend_days,
)
from institutions.signals import institution_created


@dataclass(frozen=True)
class IssuedKey:
    """A key just created. `secret` is the only copy of the full key: show it once."""

    api_key: ApiKey
    secret: str
    replaces: ApiKey | None = None  # a rotation's old key, as the rotation left it

    def json_line(self) -> str:
        """The commands' `--json` answer: `{"institutionId", "keyId", "apiKey"}`."""
        return json.dumps(
            {
                "institutionId": self.api_key.institution_id,
                "keyId": self.api_key.id,
                "apiKey": self.secret,
            }
        )


def normalize_cidr(cidr: str) -> str:
    """'10.0.0.7/8' -> '10.0.0.0/8'; a bare address becomes a /32 or /128."""
    try:
        return str(ipaddress.ip_network(cidr.strip(), strict=False))
    except ValueError:
        raise ValidationFailed(
            f"'{cidr}' is not an IPv4 or IPv6 address or CIDR range.", details={"cidr": cidr}
        ) from None


def validate_currency(code: str) -> str:
    if not isinstance(code, str) or pycountry.currencies.get(alpha_3=code) is None:
        raise ValidationFailed(
            "currency must be an ISO 4217 alpha-3 code, e.g. EUR.", details={"currency": code}
        )
    return code


@cache
def _time_zones() -> frozenset[str]:
    """The IANA names installed (the system's zone files and the pinned `tzdata` wheel's):
    `available_timezones` walks the files on every call (9 ms here); the set is read once a
    process, as `ZoneInfo` caches the zones it loads."""
    return frozenset(available_timezones())


def validate_time_zone(name: str) -> str:
    if not isinstance(name, str) or name not in _time_zones():
        raise ValidationFailed(
            "time zone must be an IANA name, e.g. Europe/Berlin or UTC.",
            details={"time_zone": name},
        )
    return name


def validate_weekend_days(days) -> list[int]:
    """ISO weekday numbers (1 Monday .. 7 Sunday), sorted without repeats; at least one day of
    the week must stay a business day. PostgreSQL refuses the rest too (a CHECK)."""
    if (
        not isinstance(days, list | tuple | set | frozenset)
        or any(isinstance(day, bool) or day not in ISO_WEEKDAYS for day in days)
        or len(set(days)) >= len(ISO_WEEKDAYS)
    ):
        raise ValidationFailed(
            "weekend days must be ISO weekday numbers (1 Monday to 7 Sunday), at most six.",
            details={"weekend_days": days},
        )
    return sorted(set(days))


def institution_create(
    *,
    name: str,
    currency: str = "EUR",
    time_zone: str = "UTC",
    weekend_days: list[int] | None = None,
) -> tuple[Institution, bool]:
    """Create the institution named `name`, or return the existing one (idempotent by name).
    `time_zone` is the calendar its card limits count days and months in; `weekend_days` its
    days off each week (ISO weekday numbers, default Saturday and Sunday: docs/calendar.md).

    A new institution gets the standard account and card products: the apps that own products
    receive `institution_created` in this transaction (their AppConfig.ready connects them), so
    this layer never imports them. Returns (institution, created).
    """

    name = name.strip()
    if not name:
        raise ValidationFailed("An institution needs a name.", details={"name": "Required."})
    validate_currency(currency)
    validate_time_zone(time_zone)
    weekend_days = validate_weekend_days(
        default_weekend_days() if weekend_days is None else weekend_days
    )
    with transaction.atomic():
        institution, created = Institution.objects.get_or_create(
            name=name,
            defaults={"currency": currency, "time_zone": time_zone, "weekend_days": weekend_days},
        )
        if created:
            institution_created.send(sender=Institution, institution=institution)
    return institution, created


# The longest holiday name kept (`Holiday.name`).
MAX_HOLIDAY_NAME = Holiday._meta.get_field("name").max_length


def holiday_add(*, institution: Institution, date: date, name: str) -> Holiday:
    """Make `date` a holiday of the institution: no business day (docs/calendar.md). `name`
    (stripped, 1 to 100 characters) says which. 409 `already_exists` when the date is one
    already (`details.date`), also when two requests race (the unique index decides); change
    or remove the one there is instead."""
    name = name.strip() if isinstance(name, str) else ""
    if not name or len(name) > MAX_HOLIDAY_NAME:
        raise ValidationFailed(
            f"A holiday needs a name of 1 to {MAX_HOLIDAY_NAME} characters.",
            details={"name": "Required, at most 100 characters."},
        )
    holiday = Holiday(institution=institution, date=date, name=name)
    with transaction.atomic(savepoint=False):
        try:
            with transaction.atomic():  # a savepoint: the conflict leaves the transaction usable
                holiday.save(force_insert=True)
        except IntegrityError as error:
            if not Holiday.objects.filter(institution=institution, date=date).exists():
                raise
            raise AlreadyExists(
                "This date is a holiday of the institution already.",
                details={"date": date.isoformat()},
            ) from error
    return holiday


def holiday_remove(*, holiday: Holiday) -> None:
    """`holiday`'s date is a business day again (unless it is a weekend day). Deadlines already
    computed from the calendar are not recomputed: whoever stored one keeps it."""
    holiday.delete()


def institution_access_grant(*, user, institution: Institution) -> InstitutionAccess:
    """Let the staff user `user` work on `institution`'s rows in the back office
    (docs/back-office.md, "The institution limit"): one row per pair (the unique constraint)."""
    return InstitutionAccess.objects.create(user=user, institution=institution)


def institution_access_remove(*, access: InstitutionAccess) -> None:
    """Take a grant away: the user no longer works on that institution's rows (their other
    grants stay)."""
    access.delete()


def institution_get(*, reference: str) -> Institution:
    """An institution by id or by exact name."""
    institution = (
        Institution.objects.filter(id=reference).first()
        or Institution.objects.filter(name=reference).first()
    )
    if institution is None:
        raise NotFound(f"No institution with id or name '{reference}'.")
    return institution


def validate_scopes(
    *, role: str | None = None, scopes: list[str] | tuple[str, ...] = ()
) -> list[str]:
    """The scopes of `role` (a preset of `institutions.scopes.ROLES`) plus `scopes`, sorted, no
    repeats.

    Refuses (ValidationFailed) an unknown role, an unknown scope, and an empty result: a key that
    may do nothing is a mistake, and no default is granted silently (least privilege is chosen,
    never implied).
    """
    if role is not None and role not in api_scopes.ROLES:
        raise ValidationFailed(
            f"Unknown role '{role}'. Known: {', '.join(api_scopes.ROLES)}.",
            details={"role": role},
        )
    unknown = sorted({scope for scope in scopes if scope not in api_scopes.ALL})
    if unknown:
        raise ValidationFailed(
            f"Unknown scope(s): {', '.join(unknown)}. Known: {', '.join(api_scopes.ALL)}.",
            details={"scopes": unknown},
        )
    granted = api_scopes.scopes_for(role=role, extra=scopes)
    if not granted:
        raise ValidationFailed(
            "A key needs a role or at least one scope (--role full|readonly|network, --scope S).",
            details={"scopes": "Required."},
        )
    return granted


def api_key_create(
    *,
    institution: Institution,
    allow: list[str],
    role: str | None = None,
    scopes: list[str] | tuple[str, ...] = (),
    name: str = "",
    created_by: str = "",
    expires_at=None,
) -> IssuedKey:
    """Create a key allowed from the CIDR ranges `allow` (at least one: deny by default), with
    the scopes of `role` plus `scopes` (`validate_scopes`: at least one, all known).

    Errors: ValidationFailed for a bad CIDR, no network, an unknown role or scope, no scope.
    """
    networks = sorted({normalize_cidr(cidr) for cidr in allow})
    if not networks:
        raise ValidationFailed(
            "A key needs at least one allowed network (--allow CIDR).",
            details={"allow": "Required."},
        )
    scopes = validate_scopes(role=role, scopes=scopes)
    full_key, prefix, secret_hash = keys.generate()
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            institution=institution,
            name=name,
            prefix=prefix,
            secret_hash=secret_hash,
            scopes=scopes,
            created_by=created_by,
            expires_at=expires_at,
        )
        AllowedNetwork.objects.bulk_create(
            AllowedNetwork(api_key=api_key, cidr=cidr) for cidr in networks
        )
    return IssuedKey(api_key=api_key, secret=full_key)


def api_key_get(*, reference: str) -> ApiKey:
    """A key by id or by public prefix (never by secret)."""
    api_key = (
        ApiKey.objects.select_related("institution").filter(id=reference).first()
        or ApiKey.objects.select_related("institution").filter(prefix=reference).first()
    )
    if api_key is None:
        raise NotFound(f"No API key with id or prefix '{reference}'.")
    return api_key


def _forget_cached(api_key: ApiKey) -> None:
    """Once this change commits, this process reads the key again at its next request (other
    processes within API_KEY_CACHE_SECONDS: `institutions.key_cache`)."""
    transaction.on_commit(partial(key_cache.forget, api_key.prefix))


def api_key_revoke(*, api_key: ApiKey, revoked_by: str = "") -> Outcome[ApiKey]:
    """Revoke at once. Revoking a revoked key changes nothing (`Outcome.changed` false)."""
    with transaction.atomic():
        _forget_cached(api_key)
        api_key = lock_api_key(api_key.pk)
        if api_key.revoked_at is not None:
            return unchanged(api_key)
        api_key.revoked_at = timezone.now()
        api_key.revoked_by = revoked_by
        api_key.save(update_fields=["revoked_at", "revoked_by"])
    return changed(api_key)


def api_key_rotate(
    *,
    api_key: ApiKey,
    grace_hours: int | None = None,
    rotated_by: str = "",
    retire_now: bool = False,
) -> IssuedKey:
    """Issue a successor with the same institution, scopes, allowlist and expiry.

    The successor inherits the old key's `expires_at`: rotating changes the secret, never how
    long access lasts, so a time-boxed key stays time-boxed. The old key keeps working for
    `grace_hours` (API_KEY_ROTATION_GRACE_HOURS by default), then expires; with `retire_now`
    (a compromised key) it is revoked at once instead, recorded as revoked by `rotated_by`, and
    no grace applies. A revoked, expired or already rotated key cannot be rotated
    (`ValidationFailed`), nor can the grace period be negative.
    """
    grace = settings.API_KEY_ROTATION_GRACE_HOURS if grace_hours is None else grace_hours
    if grace < 0:
        raise ValidationFailed("The grace period cannot be negative.")
    with transaction.atomic():
        _forget_cached(api_key)
        old = lock_api_key(api_key.pk)
        if not old.is_usable():
            raise ValidationFailed("This key is revoked or expired; create a new key instead.")
        if old.replaced_by_id is not None:
            raise ValidationFailed(f"This key was already rotated to {old.replaced_by_id}.")
        issued = api_key_create(
            institution=old.institution,
            allow=list(old.allowed_networks.values_list("cidr", flat=True)),
            scopes=old.scopes,
            name=old.name,
            created_by=rotated_by,
            expires_at=old.expires_at,
        )
        old.replaced_by = issued.api_key
        if retire_now:
            # Revoked, not expired: a rotation "now" says the secret is compromised, and the
            # revocation records who retired it (the expiry stays what it was, for the record).
            old.revoked_at = timezone.now()
            old.revoked_by = rotated_by
            old.save(update_fields=["revoked_at", "revoked_by", "replaced_by"])
        else:
            expires_at = timezone.now() + timedelta(hours=grace)
            if old.expires_at is None or old.expires_at > expires_at:
                old.expires_at = expires_at
            old.save(update_fields=["expires_at", "replaced_by"])
    return IssuedKey(api_key=issued.api_key, secret=issued.secret, replaces=old)


def api_key_set_scopes(
    *, api_key: ApiKey, scopes: list[str] | tuple[str, ...]
) -> tuple[ApiKey, list[str]]:
    """Replace the scopes of `api_key` with `scopes` (all known, at least one; see
    `validate_scopes`). Takes effect on the key's next request. A rotated key's successor keeps
    its own scopes. Returns (the key, its scopes before).

    Errors: ValidationFailed for an unknown scope, an empty set, or a revoked key (revocation is
    final; its record stays as it was when revoked).
    """
    scopes = validate_scopes(scopes=scopes)
    with transaction.atomic():
        _forget_cached(api_key)
        api_key = lock_api_key(api_key.pk)
        if api_key.revoked_at is not None:
            raise ValidationFailed("This key is revoked; its scopes can no longer be changed.")
        before = sorted(api_key.scopes)
        if before != scopes:
            api_key.scopes = scopes
            api_key.save(update_fields=["scopes"])
    return api_key, before


def allowlist_add(*, api_key: ApiKey, cidr: str) -> AllowedNetwork:
    cidr = normalize_cidr(cidr)
    with transaction.atomic():
        _forget_cached(api_key)
        network, _ = AllowedNetwork.objects.get_or_create(api_key=api_key, cidr=cidr)
    return network


def allowlist_remove(*, api_key: ApiKey, cidr: str) -> None:
    cidr = normalize_cidr(cidr)
    with transaction.atomic():
        _forget_cached(api_key)
        deleted, _ = AllowedNetwork.objects.filter(api_key=api_key, cidr=cidr).delete()
    if not deleted:
        raise NotFound(f"{cidr} is not on the allowlist of key {api_key.id}.")
