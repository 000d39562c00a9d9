"""Card status (`card_set_status`, `card_update`) and the lifecycle operations (`card_renew`,
`card_reissue`, `card_replace`): every move of the status machine, and what each operation
keeps, renews and carries over (the table in `cards/services/lifecycle.py`)."""

import calendar
import itertools
from datetime import date, timedelta

import pytest
from django.db import IntegrityError, transaction
from stdnum import luhn

from accounts.models import Account
from accounts.services import account_set_status
from cards.dates import add_months, today_of
from cards.models import Card, CardProduct
from cards.services import (
    card_by_pan,
    card_limits_set,
    card_pin_set,
    card_pin_verify,
    card_reissue,
    card_renew,
    card_replace,
    card_security_settings_set,
    card_set_status,
    card_update,
)
from cards.services.lifecycle import REISSUABLE, RENEWABLE, REPLACEABLE
from cards.services.status import TRANSITIONS
from core.actors import SYSTEM
from core.exceptions import (
    AccountNotActive,
    CardNotActive,
    InvalidStateTransition,
    ValidationFailed,
)

from .helpers import (
    ADDRESS,
    card_events,
    force_status,
    fresh_card,
    issue_card,
    make_account,
    make_customer,
    make_institution,
    new_card,
    refused,
)

pytestmark = pytest.mark.django_db

S = Card.Status
STATUSES = list(S)
PHYSICAL, VIRTUAL = CardProduct.Form.PHYSICAL, CardProduct.Form.VIRTUAL
NEW_ADDRESS = {**ADDRESS, "line1": "Friedrichstrasse 100", "line2": None}


@pytest.fixture
def fi():
    return make_institution()


def physical_card(fi, status=S.ACTIVE):
    return force_status(new_card(fi, form=PHYSICAL), status)


# --- Status machine -----------------------------------------------------------------------------


def test_the_transition_table_is_the_designs():
    allowed = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert set(TRANSITIONS) == set(STATUSES)
    assert allowed == {
        (S.INACTIVE, S.ACTIVE),
        (S.ACTIVE, S.SUSPENDED),
        (S.SUSPENDED, S.ACTIVE),
        *((a, b) for a in (S.ACTIVE, S.SUSPENDED) for b in (S.LOST, S.STOLEN, S.CLOSED)),
    }
    assert not any(S.EXPIRED in targets for targets in TRANSITIONS.values())


@pytest.mark.parametrize(
    ("from_", "to"), [(a, b) for a, b in itertools.product(STATUSES, STATUSES) if a != b]
)
def test_every_status_move(fi, from_, to):
    card = force_status(new_card(fi), from_)
    if to in TRANSITIONS[from_]:
        outcome = card_set_status(card=card, status=to, reason="asked")
        assert (outcome.value.status, outcome.changed, outcome.previous) == (to, True, from_)
        stored = fresh_card(card)
        assert (stored.status, stored.status_reason) == (to, "asked")
        assert stored.updated_at > card.updated_at
        assert card_events(card, "card.status_changed") == [
            ("card.status_changed", {"from": from_, "to": to, "reason": "asked"})
        ]
    else:
        with refused(InvalidStateTransition) as excinfo:
            card_set_status(card=card, status=to)
        error = excinfo.value
        assert (error.status, error.code) == (409, "invalid_state_transition")
        assert error.details == {"from": from_, "to": to}
        assert fresh_card(card).status == from_


@pytest.mark.parametrize("status", STATUSES)
def test_asking_for_the_current_status_changes_nothing(fi, status):
    card = force_status(new_card(fi), status)
    before = fresh_card(card)
    outcome = card_set_status(card=card, status=status, reason="again")
    assert (outcome.value.status, outcome.changed) == (status, False)
    after = fresh_card(card)
    assert (after.status, after.status_reason, after.updated_at) == (
        before.status,
        before.status_reason,
        before.updated_at,
    )
    assert card_events(card, "card.status_changed") == []


def test_a_reason_code_goes_in_the_event_beside_the_reason(fi):
    card = new_card(fi, status=S.ACTIVE)
    card_set_status(card=card, status=S.SUSPENDED, reason="Wallet gone", reason_code="lost")
    assert fresh_card(card).status_reason == "Wallet gone"  # the card keeps the text
    assert card_events(card, "card.status_changed") == [
        (
            "card.status_changed",
            {"from": "active", "to": "suspended", "reason": "Wallet gone", "reasonCode": "lost"},
        )
    ]


def test_an_unknown_reason_code_is_refused_before_anything_changes(fi):
    card = new_card(fi, status=S.ACTIVE)
    with refused(ValidationFailed) as excinfo:
        card_set_status(card=card, status=S.SUSPENDED, reason_code="bored")
    assert excinfo.value.status == 400 and "reason_code" in excinfo.value.details
    assert fresh_card(card).status == S.ACTIVE
    assert card_events(card, "card.status_changed") == []


def test_the_status_is_read_under_lock_not_from_the_callers_copy(fi):
    card = new_card(fi, status=S.ACTIVE)
    stale = fresh_card(card)
    card_set_status(card=card, status=S.CLOSED)
    with refused(InvalidStateTransition) as excinfo:
        card_set_status(card=stale, status=S.SUSPENDED)
    assert excinfo.value.details == {"from": "closed", "to": "suspended"}


def test_a_long_reason_is_cut_to_500_characters(fi):
    card = new_card(fi, status=S.ACTIVE)
    card_set_status(card=card, status=S.SUSPENDED, reason="x" * 600)
    assert fresh_card(card).status_reason == "x" * 500


def set_expiry_day(card, day: date) -> Card:
    Card.objects.filter(pk=card.pk).update(
        expiry_year=day.year, expiry_month=day.month, expires_on=day
    )
    return fresh_card(card)


@pytest.mark.parametrize("from_", [S.INACTIVE, S.SUSPENDED])
def test_a_card_past_its_expiry_cannot_be_activated(fi, from_):
    card = force_status(new_card(fi), from_)
    card = set_expiry_day(card, today_of(fi) - timedelta(days=1))
    with refused(InvalidStateTransition) as excinfo:
        card_set_status(card=card, status=S.ACTIVE)
    assert excinfo.value.details == {"from": from_, "to": "active"}
    if from_ == S.SUSPENDED:  # but it can still be closed
        card_set_status(card=card, status=S.CLOSED)
        assert fresh_card(card).status == "closed"


def test_a_card_is_valid_through_its_expiry_day_in_the_institutions_time_zone():
    fi = make_institution(time_zone="Pacific/Kiritimati")
    card = new_card(fi)
    card = set_expiry_day(card, today_of(fi))
    card_set_status(card=card, status=S.ACTIVE)
    assert fresh_card(card).status == "active"


def test_risk_level(fi):
    card = new_card(fi)
    card_update(card=card, risk_level=Card.RiskLevel.HIGH)
    assert fresh_card(card).risk_level == "high"
    card_update(card=card, risk_level=Card.RiskLevel.HIGH)  # no change, no event
    assert card_events(card, "card.updated") == [
        ("card.updated", {"changedFields": ["riskLevel"], "riskLevel": "high"})
    ]
    card = force_status(card, S.CLOSED)
    with refused(CardNotActive):
        card_update(card=card, risk_level=Card.RiskLevel.LOW)


# --- Lifecycle: what each operation keeps and renews --------------------------------------------


def customize(card: Card) -> Card:
    """Give the card settings a successor must carry over: controls, limits, risk, a PIN."""
    card_security_settings_set(
        card=card,
        changes={
            "ecommerce": False,
            "atm": False,
            "magstripe": True,
            "blocked_mccs": ["7995", "5967"],
            "blocked_countries": ["RUS"],
        },
    )
    card_limits_set(
        card=card,
        changes={
            "limit_per_transaction": 1234,
            "limit_daily": 5678,
            "limit_monthly": 9999,
            "limit_daily_cash": 100,
        },
    )
    card_update(card=card, risk_level=Card.RiskLevel.MEDIUM)
    card_pin_set(card=card, pin="4321", current_pin=None)
    card_pin_verify(card=card, pin="0000")  # one wrong try carries over too
    return fresh_card(card)


CARRIED = [
    "account_id",
    "customer_id",
    "product_id",
    "institution_id",
    "form",
    "embossed_name",
    "ecommerce",
    "contactless",
    "atm",
    "international",
    "magstripe",
    "blocked_mccs",
    "blocked_countries",
    "limit_per_transaction",
    "limit_daily",
    "limit_monthly",
    "limit_daily_cash",
    "risk_level",
    "pin_hash",
    "pin_failed_attempts",
    "pin_blocked",
    "pin_changed_at",
    "delivery_address",
]


def carried(card: Card) -> dict:
    return {field: getattr(card, field) for field in CARRIED}


OPERATIONS = {
    "renewal": lambda card, **kw: card_renew(card=card, **kw),
    "reissue": lambda card, **kw: card_reissue(card=card, **kw),
    "replacement": lambda card, **kw: card_replace(
        card=card, reason=kw.pop("reason", "damaged"), **kw
    ),
}


def test_renewal_keeps_the_pan_and_gives_a_new_expiry_and_cvv(fi):
    old = customize(physical_card(fi))
    pan, cvv = old.pan(), old.cvv()
    new = fresh_card(card_renew(card=old))
    old = fresh_card(old)

    assert new.pk != old.pk
    assert (new.pan(), new.pan_fingerprint, new.masked_pan) == (
        pan,
        old.pan_fingerprint,
        old.masked_pan,
    )
    assert new.cvv() != cvv and len(new.cvv()) == 3
    validity = old.product.validity_years
    assert (new.expiry_year, new.expiry_month) == add_months(
        old.expiry_year, old.expiry_month, 12 * validity
    )
    assert new.expires_on > old.expires_on
    assert (new.status, old.status, old.status_reason) == ("active", "closed", "renewed")
    assert (new.predecessor_id, new.succession, old.successor.pk) == (old.pk, "renewal", new.pk)
    assert new.lineage_id == old.pk
    assert carried(new) == carried(old)
    assert card_pin_verify(card=new, pin="4321").verified


def test_reissue_keeps_the_pan_the_expiry_and_the_cvv(fi):
    old = customize(physical_card(fi))
    new = fresh_card(card_reissue(card=old, reason="damaged"))
    old = fresh_card(old)

    assert (new.pan(), new.cvv()) == (old.pan(), old.cvv())
    assert new.pan_fingerprint == old.pan_fingerprint
    assert (new.expiry_year, new.expiry_month, new.expires_on) == (
        old.expiry_year,
        old.expiry_month,
        old.expires_on,
    )
    assert new.pan_encrypted != old.pan_encrypted  # sealed again, bound to the new card
    assert (new.status, old.status, old.status_reason) == ("active", "closed", "reissued: damaged")
    assert (new.predecessor_id, new.succession, old.successor.pk) == (old.pk, "reissue", new.pk)
    assert carried(new) == carried(old)
    assert card_pin_verify(card=new, pin="4321").verified


def test_reissue_can_change_the_embossed_name_and_the_delivery_address(fi):
    old = physical_card(fi)
    new = card_reissue(card=old, embossed_name="ADA KING", delivery_address=NEW_ADDRESS)
    new = fresh_card(new)
    assert (new.embossed_name, new.delivery_address) == ("ADA KING", NEW_ADDRESS)
    assert fresh_card(old).status_reason == "reissued"


def test_replacement_gives_a_new_pan_expiry_and_cvv_and_an_inactive_card(fi):
    old = customize(physical_card(fi))
    old = set_expiry_day(old, date(today_of(fi).year + 1, 1, 31))
    new = fresh_card(card_replace(card=old, reason="compromised"))
    old = fresh_card(old)

    product = old.product
    assert new.pan() != old.pan() and new.pan_fingerprint != old.pan_fingerprint
    assert new.pan().startswith(product.bin) and luhn.is_valid(new.pan())
    assert len(new.pan()) == product.pan_length
    today = today_of(fi)
    assert (new.expiry_year, new.expiry_month) == (
        today.year + product.validity_years,
        today.month,
    )
    assert new.status == "inactive"
    assert (old.status, old.status_reason) == ("closed", "replaced: compromised")
    assert (new.predecessor_id, new.succession, old.successor.pk) == (
        old.pk,
        "replacement",
        new.pk,
    )
    assert new.lineage_id == old.pk
    assert carried(new) == carried(old)
    assert card_pin_verify(card=new, pin="4321").verified


@pytest.mark.parametrize(
    ("reason", "old_status"),
    [("lost", S.LOST), ("stolen", S.STOLEN), ("damaged", S.CLOSED), ("compromised", S.CLOSED)],
)
def test_replacement_reasons_decide_what_the_old_card_becomes(fi, reason, old_status):
    old = new_card(fi, status=S.ACTIVE)
    new = card_replace(card=old, reason=reason)
    assert fresh_card(old).status == old_status
    assert card_events(old, "card.status_changed") == [
        (
            "card.status_changed",
            {"from": "active", "to": old_status, "reason": f"replaced: {reason}"},
        )
    ]
    assert card_events(new, "card.replaced")[0][1]["reason"] == reason


def test_an_unknown_replacement_reason_is_a_programming_error(fi):
    with pytest.raises(ValueError, match="unknown replacement reason"):
        card_replace(card=new_card(fi), reason="bored")


@pytest.mark.parametrize("status", [S.LOST, S.STOLEN])
def test_a_lost_or_stolen_card_can_be_replaced_and_keeps_its_status(fi, status):
    old = new_card(fi, status=S.ACTIVE)
    card_set_status(card=old, status=status, reason="reported")
    new = card_replace(card=old, reason="damaged")
    old = fresh_card(old)
    assert (old.status, old.status_reason) == (status, "reported")
    assert fresh_card(new).status == "inactive"
    assert len(card_events(old, "card.status_changed")) == 1


def test_a_renewed_expired_card_stays_expired_and_its_successor_is_inactive(fi):
    old = force_status(new_card(fi, status=S.ACTIVE), S.EXPIRED)
    old = set_expiry_day(old, date(2020, 1, 31))
    new = fresh_card(card_renew(card=old))
    assert fresh_card(old).status == "expired"
    assert new.status == "inactive"
    assert new.pan() == old.pan()
    today = today_of(fi)
    # the old expiry is past: current month + validity
    assert (new.expiry_year, new.expiry_month) == (
        today.year + old.product.validity_years,
        today.month,
    )
    assert card_events(old, "card.status_changed") == []


def test_renewal_expiry_is_the_later_of_the_old_expiry_and_this_month_plus_validity(fi):
    today = today_of(fi)
    later = date(today.year + 1, 2, 28)
    old = set_expiry_day(new_card(fi, status=S.ACTIVE), later)
    new = card_renew(card=old)
    assert (new.expiry_year, new.expiry_month) == (today.year + 1 + 3, 2)  # PREPAID: 3 years
    assert new.expires_on == date(today.year + 4, 2, calendar.monthrange(today.year + 4, 2)[1])


@pytest.mark.parametrize("status", [S.INACTIVE, S.SUSPENDED])
def test_renewal_keeps_a_live_cards_status(fi, status):
    old = force_status(new_card(fi), status)
    assert card_renew(card=old).status == status


@pytest.mark.parametrize("status", [S.INACTIVE, S.SUSPENDED])
def test_reissue_keeps_the_cards_status(fi, status):
    old = physical_card(fi, status)
    assert card_reissue(card=old).status == status


@pytest.mark.parametrize(
    ("operation", "allowed"),
    [("renewal", RENEWABLE), ("reissue", REISSUABLE), ("replacement", REPLACEABLE)],
)
@pytest.mark.parametrize("status", STATUSES)
def test_which_statuses_each_operation_accepts(fi, operation, allowed, status):
    expected = {
        "renewal": {S.INACTIVE, S.ACTIVE, S.SUSPENDED, S.EXPIRED},
        "reissue": {S.INACTIVE, S.ACTIVE, S.SUSPENDED},
        "replacement": {S.INACTIVE, S.ACTIVE, S.SUSPENDED, S.LOST, S.STOLEN},
    }[operation]
    assert set(allowed) == expected
    old = physical_card(fi, status)
    if status in expected:
        new = OPERATIONS[operation](old)
        assert new.predecessor_id == old.pk
    else:
        with refused(InvalidStateTransition) as excinfo:
            OPERATIONS[operation](old)
        assert excinfo.value.details["from"] == status


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_card_has_one_successor_at_most(fi, operation):
    old = physical_card(fi)
    OPERATIONS[operation](old)
    with refused(InvalidStateTransition) as excinfo:
        OPERATIONS[operation](old)
    assert excinfo.value.status == 409
    assert excinfo.value.details["from"] == fresh_card(old).status


@pytest.mark.parametrize(
    ("setup", "operation"),
    [(S.EXPIRED, "renewal"), (S.LOST, "replacement"), (S.STOLEN, "replacement")],
)
def test_a_card_that_stays_in_its_status_still_gets_one_successor_only(fi, setup, operation):
    old = physical_card(fi, setup)
    first = OPERATIONS[operation](old)
    assert fresh_card(old).status == setup
    with refused(InvalidStateTransition) as excinfo:
        OPERATIONS[operation](old)
    assert excinfo.value.details["successor_card_id"] == first.pk
    assert excinfo.value.details["from"] == setup


def test_the_successor_can_be_renewed_in_turn_and_keeps_the_lineage(fi):
    first = new_card(fi, status=S.ACTIVE)
    second = card_renew(card=first)
    third = card_replace(card=second, reason="damaged")
    fourth = card_renew(card=third)
    assert [c.lineage_id for c in (second, third, fourth)] == [first.pk] * 3
    assert [fresh_card(c).status for c in (first, second, third, fourth)] == [
        "closed",
        "closed",
        "closed",
        "inactive",
    ]


def test_a_virtual_card_is_not_reissued(fi):
    old = new_card(fi, status=S.ACTIVE, form=VIRTUAL)
    with refused(ValidationFailed) as excinfo:
        card_reissue(card=old)
    assert excinfo.value.details == {"form": "virtual"}


@pytest.mark.parametrize("operation", ["renewal", "replacement"])
def test_a_virtual_card_gets_no_delivery_address(fi, operation):
    old = new_card(fi, status=S.ACTIVE, form=VIRTUAL)
    with refused(ValidationFailed) as excinfo:
        OPERATIONS[operation](old, delivery_address=NEW_ADDRESS)
    assert list(excinfo.value.details) == ["delivery_address"]


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_physical_successor_goes_to_the_new_delivery_address(fi, operation):
    old = physical_card(fi)
    new = OPERATIONS[operation](old, delivery_address=NEW_ADDRESS)
    assert fresh_card(new).delivery_address == NEW_ADDRESS
    assert fresh_card(old).delivery_address == ADDRESS


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_no_successor_on_a_closed_account(fi, operation):
    old = physical_card(fi)
    account_set_status(account=old.account, status=Account.Status.CLOSED)
    with refused(AccountNotActive) as excinfo:
        OPERATIONS[operation](old)
    assert excinfo.value.details == {"account_id": old.account_id, "status": "closed"}


@pytest.mark.parametrize(
    ("operation", "event_type"),
    [("renewal", "card.renewed"), ("reissue", "card.reissued"), ("replacement", "card.replaced")],
)
def test_each_operation_emits_its_event_with_the_predecessor(fi, operation, event_type):
    old = physical_card(fi)
    new = OPERATIONS[operation](old)
    [(type_, data)] = card_events(new)
    assert type_ == event_type
    assert data["predecessorCardId"] == old.pk
    assert (data["accountId"], data["customerId"], data["last4"]) == (
        old.account_id,
        old.customer_id,
        new.pan_last4,
    )
    assert data["status"] == new.status
    assert card_events(old, "card.status_changed")[0][1]["to"] == fresh_card(old).status


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_one_live_card_per_pan_at_any_time(fi, operation):
    old = physical_card(fi)
    pan = old.pan()
    new = OPERATIONS[operation](old)
    live = Card.objects.filter(status__in=Card.LIVE)
    if operation == "replacement":
        assert new.pan_fingerprint != old.pan_fingerprint
        assert not live.filter(pan_fingerprint=old.pan_fingerprint).exists()
    else:
        assert Card.objects.filter(pan_fingerprint=old.pan_fingerprint).count() == 2
    assert list(live.filter(pan_fingerprint=new.pan_fingerprint)) == [new]
    assert Card.objects.filter(status__in=Card.LIVE, account=old.account).count() == 1
    # a lookup by PAN finds the live holder; after a replacement, the newest that held it
    assert card_by_pan(institution=fi, pan=pan, actor=SYSTEM).pk == (
        old.pk if operation == "replacement" else new.pk
    )


def test_a_supplementary_card_is_renewed_as_a_supplementary_card(fi):
    account = make_account(fi)
    primary = issue_card(account, status=S.ACTIVE)
    partner = make_customer(fi, "Grace", "Hopper")
    supplementary = issue_card(account, customer=partner, primary_card=primary, status=S.ACTIVE)
    renewed = card_renew(card=supplementary)
    assert (renewed.primary_card_id, renewed.customer_id) == (primary.pk, partner.pk)


def test_the_database_refuses_a_second_live_card_with_the_same_pan(fi):
    old = physical_card(fi)
    card_renew(card=old)
    with pytest.raises(IntegrityError, match="card_live_pan_unique"), transaction.atomic():
        Card.objects.filter(pk=old.pk).update(status=S.SUSPENDED)
    assert fresh_card(old).status == "closed"
