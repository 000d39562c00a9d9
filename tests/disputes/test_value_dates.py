"""Value dates (issue 32 item 3; docs/balances-at-an-instant.md, "Value dates"): a dispute's
provisional credit is posted when the dispute is submitted but counts from the payment it
disputes. `balances?at=` reads the booking by default and, with `basis=value`, what counted by
then; the statement line says its value date; a journal cannot be value-dated after its
posting (PostgreSQL's CHECK)."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Entry, Journal
from core.timestamps import iso_millis
from tests.accounts.api.helpers import assert_validation_error, resource
from tests.authorizations.helpers import START, card_lines

from .helpers import PAID, filed, moved, payment

pytestmark = pytest.mark.django_db

US = timedelta(microseconds=1)


def posted_at(api, account_id: str, instant, basis: str | None = None) -> int:
    params = {"at": instant.isoformat().replace("+00:00", "Z")}
    if basis:
        params["basis"] = basis
    return resource(api.get(f"/accounts/{account_id}/balances", params), "v2")["posted"]


def debited_at(p):
    """The instant the payment's entry debited the account."""
    return Entry.objects.get(account_id=p.account_id, direction="debit").created_at


def test_the_provisional_credit_counts_from_the_payment_it_disputes(api_v2):
    p = payment(api_v2)
    between = timezone.now()  # after the payment, before the credit
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]

    moved(api_v2, dispute_id, "submitted")

    debit = debited_at(p)
    # The booking: what was posted by then.
    assert posted_at(api_v2, p.account_id, between) == START - PAID
    assert posted_at(api_v2, p.account_id, between, "booking") == START - PAID
    # By value date: the credit counts from the debit it answers.
    assert posted_at(api_v2, p.account_id, between, "value") == START
    assert posted_at(api_v2, p.account_id, debit, "value") == START
    assert posted_at(api_v2, p.account_id, debit - US, "value") == START  # before both
    assert posted_at(api_v2, p.account_id, timezone.now(), "value") == START
    credit = next(line for line in card_lines(api_v2, p.card_id) if line["type"] == "CashInc")
    assert (credit["valueAt"], credit["disputeId"], credit["category"]) == (
        iso_millis(debit),
        dispute_id,
        "dispute",
    )
    [journal] = Journal.objects.filter(kind="dispute")
    assert journal.value_at == debit < journal.created_at


def test_a_reversal_counts_from_its_posting(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    credited = timezone.now()

    moved(api_v2, dispute_id, "closed", outcome="denied")

    assert posted_at(api_v2, p.account_id, credited, "value") == START
    assert posted_at(api_v2, p.account_id, timezone.now(), "value") == START - PAID
    reversal = next(line for line in card_lines(api_v2, p.card_id) if line["type"] == "CashDec")
    assert reversal["valueAt"] is None


def test_other_lines_have_no_value_date(api_v2):
    p = payment(api_v2)

    assert {line["valueAt"] for line in card_lines(api_v2, p.card_id)} == {None}
    assert posted_at(api_v2, p.account_id, timezone.now(), "value") == START - PAID


def test_basis_is_booking_or_value(api_v2):
    p = payment(api_v2)

    response = api_v2.get(
        f"/accounts/{p.account_id}/balances", {"at": "2026-11-01T00:00:00Z", "basis": "x"}
    )

    assert_validation_error(response, "v2", {"basis": '"x" is not a valid choice.'})


def test_a_journal_is_never_value_dated_after_its_posting(api_v2):
    p = payment(api_v2)
    journal = Journal.objects.filter(statement_lines__account_id=p.account_id).first()

    with pytest.raises(IntegrityError), transaction.atomic():
        Journal.objects.filter(pk=journal.pk).update(
            value_at=journal.created_at + timedelta(seconds=1)
        )
