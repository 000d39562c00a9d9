"""A card network's settlement of a day received (docs/reconciliation.md, "Card settlement in"):
checked whole, then stored with its rows and posted as journals on its date, in one
transaction.

Every amount is signed from the institution's side: positive what the network pays it,
negative what it pays the network. The totals are the sums of the rows by kind (interchange:
of every row's), and `net` is their sum with the scheme fees:

    net = purchases + refunds + cash + chargebacks + representments + interchange + scheme fees

One settlement a network, date and currency (a unique constraint decides, also for two at
once): the same content again is the same settlement, other content is 409 `already_exists`.
"""

import hashlib
import json
import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, Journal
from accounts.posting import credit, debit, journal_new, post
from accounts.services.accounts import internal_account
from core.exceptions import AlreadyExists, ValidationFailed
from core.money import MAX_AMOUNT, WITHOUT_MINOR_UNITS
from events.services import emit_for
from institutions.calendar import local_date

from ..models import NetworkSettlement, NetworkSettlementRow

# The rows one settlement holds (a request body is held to MAX_BATCH_BODY_BYTES, about 90
# bytes a row); a network's day with more would come as a file (not built).
MAX_ROWS = 10_000
# How far back a settlement date may be: a year's late file, not a mistyped century.
MAX_AGE = timedelta(days=400)

# A network's transaction id as TX gave it (an authorization's, a return's) or as a network
# writes its own: letters, digits, "_" and "-".
TRANSACTION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

TOTAL_OF_KIND = {
    NetworkSettlementRow.Kind.PURCHASE: "purchases",
    NetworkSettlementRow.Kind.REFUND: "refunds",
    NetworkSettlementRow.Kind.CASH: "cash",
    NetworkSettlementRow.Kind.CHARGEBACK: "chargebacks",
    NetworkSettlementRow.Kind.REPRESENTMENT: "representments",
}
TOTALS = (*TOTAL_OF_KIND.values(), "interchange", "scheme_fees", "net")


def content_digest(
    *, network: str, settlement_date, currency: str, totals: dict, rows: list[dict]
) -> str:
    """SHA-256 of the settlement's content: its key, totals and rows (in the order of their
    network transaction id and kind: the same rows sent in another order are the same
    content)."""
    content = {
        "network": network,
        "settlement_date": settlement_date.isoformat(),
        "currency": currency,
        "totals": {name: totals[name] for name in TOTALS},
        "rows": sorted(
            [row["network_transaction_id"], row["kind"], row["amount"], row["interchange"]]
            for row in rows
        ),
    }
    encoded = json.dumps(content, separators=(",", ":"), sort_keys=True).encode()
    return hashlib.sha256(encoded).hexdigest()


def settlement_check(
    *, institution, settlement_date, currency: str, totals: dict, rows: list[dict]
) -> None:
    """ValidationFailed naming the first field that is wrong (`totals.purchases`,
    `rows.3.amount`; the API renders them in its names): the checks the fields' types do not
    make."""
    if currency in WITHOUT_MINOR_UNITS:
        raise ValidationFailed(details={"currency": f"{currency} has no minor unit."})
    today = local_date(institution, timezone.now())
    if settlement_date > today:
        raise ValidationFailed(
            details={
                "settlement_date": f"After today ({today}): a settlement is sent on its "
                "date or after it."
            }
        )
    if settlement_date < today - MAX_AGE:
        raise ValidationFailed(
            details={"settlement_date": f"More than {MAX_AGE.days} days before today ({today})."}
        )
    if len(rows) > MAX_ROWS:
        raise ValidationFailed(details={"rows": f"At most {MAX_ROWS} rows."})
    sums = dict.fromkeys(TOTALS, 0)
    seen = set()
    for index, row in enumerate(rows):
        kind, amount = row["kind"], row["amount"]
        if not TRANSACTION_ID.fullmatch(row["network_transaction_id"]):
            raise ValidationFailed(
                details={
                    f"rows.{index}.network_transaction_id": "1 to 64 letters, digits, '_' or '-'."
                }
            )
        if amount == 0 or (amount < 0) != (kind in NetworkSettlementRow.PAID):
            sign = "below" if kind in NetworkSettlementRow.PAID else "above"
            raise ValidationFailed(
                details={
                    f"rows.{index}.amount": f"A {kind} is {sign} 0 (signed from the "
                    "institution's side: negative what it pays the network)."
                }
            )
        key = (row["network_transaction_id"], kind)
        if key in seen:
            raise ValidationFailed(
                details={
                    f"rows.{index}.network_transaction_id": f"A second {kind} of this "
                    "transaction in the settlement."
                }
            )
        seen.add(key)
        sums[TOTAL_OF_KIND[kind]] += amount
        sums["interchange"] += row["interchange"]
    for name in (*TOTAL_OF_KIND.values(), "interchange"):
        if totals[name] != sums[name]:
            raise ValidationFailed(
                details={f"totals.{name}": f"{totals[name]}, but the rows sum to {sums[name]}."}
            )
    net = sum(totals[name] for name in TOTALS if name != "net")
    if totals["net"] != net:
        raise ValidationFailed(
            details={
                "totals.net": f"{totals['net']}, but purchases + refunds + cash + "
                f"chargebacks + representments + interchange + scheme fees = {net}."
            }
        )
    if abs(net) > MAX_AMOUNT:  # each journal's amount stays within what one posting moves
        raise ValidationFailed(details={"totals.net": f"Beyond {MAX_AMOUNT} minor units."})


def network_settlement_receive(
    *,
    institution,
    network: str,
    settlement_date,
    currency: str,
    totals: dict,
    rows: list[dict],
) -> tuple[NetworkSettlement, bool]:
    """The settlement and whether it is new (`totals`: purchases, refunds, cash, chargebacks,
    representments, interchange, scheme_fees, net; a row: network_transaction_id, kind, amount,
    interchange). ValidationFailed or
    AlreadyExists, with nothing written, when it is refused."""
    settlement_check(
        institution=institution,
        settlement_date=settlement_date,
        currency=currency,
        totals=totals,
        rows=rows,
    )
    digest = content_digest(
        network=network,
        settlement_date=settlement_date,
        currency=currency,
        totals=totals,
        rows=rows,
    )
    key = {
        "institution": institution,
        "network": network,
        "settlement_date": settlement_date,
        "currency": currency,
    }
    existing = NetworkSettlement.objects.filter(**key).first()
    if existing is not None:
        return _the_same(existing, digest), False
    try:
        with transaction.atomic():
            settlement = _store(institution, key, digest, totals, rows)
    except IntegrityError:
        # The same network's day stored at the same moment by another request.
        existing = NetworkSettlement.objects.filter(**key).first()
        if existing is None:
            raise
        return _the_same(existing, digest), False
    return settlement, True


def _the_same(existing: NetworkSettlement, digest: str) -> NetworkSettlement:
    if existing.sha256 != digest:
        raise AlreadyExists(
            "This network's settlement of this date and currency was received with other "
            "content: a correction is a break to resolve, not a second settlement.",
            details={"settlement_id": existing.pk},
        )
    return existing


def _store(institution, key: dict, digest: str, totals: dict, rows: list[dict]):
    settlement = NetworkSettlement(
        **key,
        purchases=totals["purchases"],
        refunds=totals["refunds"],
        cash=totals["cash"],
        chargebacks=totals["chargebacks"],
        representments=totals["representments"],
        interchange=totals["interchange"],
        scheme_fees=totals["scheme_fees"],
        net=totals["net"],
        sha256=digest,
        row_count=len(rows),
    )
    gross = sum(totals[name] for name in TOTAL_OF_KIND.values())
    journals = [
        (field, code, amount, _journal(settlement, what))
        for field, code, amount, what in (
            ("clearing_journal", Account.InternalCode.CARD_CLEARING, gross, "transactions"),
            (
                "interchange_journal",
                Account.InternalCode.FEES,
                totals["interchange"],
                "interchange",
            ),
            (
                "scheme_fees_journal",
                Account.InternalCode.FEES,
                totals["scheme_fees"],
                "scheme fees",
            ),
        )
        if amount
    ]
    for field, _, _, journal in journals:
        # Posted below; PostgreSQL checks a foreign key at commit (deferred).
        setattr(settlement, f"{field}_id", journal.pk)
    settlement.save(force_insert=True)
    NetworkSettlementRow.objects.bulk_create(
        [
            NetworkSettlementRow(
                settlement=settlement,
                position=position,
                network_transaction_id=row["network_transaction_id"],
                kind=row["kind"],
                amount=row["amount"],
                interchange=row["interchange"],
            )
            for position, row in enumerate(rows, start=1)
        ],
        batch_size=1000,
    )
    against = internal_account(
        institution=institution, code=Account.InternalCode.SETTLEMENT, currency=settlement.currency
    )
    for _, code, amount, journal in journals:
        account = internal_account(institution=institution, code=code, currency=settlement.currency)
        post(
            institution_id=institution.pk,
            currency=settlement.currency,
            moves=_both_sides(account.pk, against.pk, amount),
            journal=journal,
        )
    emit_for(
        settlement,
        "network_settlement.received",
        data={
            "network_settlement_id": settlement.pk,
            "network": settlement.network,
            "settlement_date": settlement.settlement_date.isoformat(),
            "currency": settlement.currency,
            "net": settlement.net,
            "row_count": settlement.row_count,
        },
    )
    return settlement


def _journal(settlement: NetworkSettlement, what: str) -> Journal:
    """A journal of the settlement, value-dated to the start of its date in the institution's
    time zone (`Journal.value_at`: never after the posting, so the date is today or before)."""
    journal = journal_new(
        institution_id=settlement.institution.pk,
        kind=Journal.Kind.NETWORK_SETTLEMENT,
        description=f"{settlement}: {what} (settlement {settlement.pk})",
    )
    zone = ZoneInfo(settlement.institution.time_zone)
    journal.value_at = datetime.combine(settlement.settlement_date, time.min, zone)
    return journal


def _both_sides(account_id: str, against_id: str, amount: int) -> list:
    """`amount` (signed) added to `account_id`'s balance and taken from `against_id`'s."""
    if amount > 0:
        return [credit(account_id, amount, check=""), debit(against_id, amount, check="")]
    return [debit(account_id, -amount, check=""), credit(against_id, -amount, check="")]
