"""Four eyes above a threshold (docs/back-office.md, "Four eyes"): overdraft raises, card limit
raises and PIN unblocks join adjustments and fee waivers. Each is made at once by one staff user
when it takes no risk (a lower limit) or stays within the institution's `ApprovalThreshold` for
its kind and currency; otherwise it waits for a second staff user, who approves it (the real
service runs then, as them) or rejects it. With no threshold, everything waits: the default.
Nobody approves their own request, whatever its kind.

Four eyes that cannot be sliced (issue 46 H7, the last section): a change of money is made
alone only while the same user's alone-made changes of its kind to its target in the last 24
hours, it included, stay within the threshold, and every target together within the daily
total; several alone-made changes to one account raise a monitoring alert."""

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.db import IntegrityError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, AccountProduct, Adjustment, Fee
from accounts.services import fee_charge
from backoffice.models import AloneChange, ApprovalRequest, ApprovalThreshold
from backoffice.services.approvals import approval_approve, approval_reject
from backoffice.services.staff_changes import (
    staff_adjust,
    staff_set_card_limits,
    staff_set_overdraft_limit,
    staff_unblock_pin,
    staff_waive_fee,
)
from backoffice.services.thresholds import approval_threshold_set
from cards.models import Card, PinUnblock
from core.actors import SYSTEM, Actor
from core.exceptions import (
    AlreadyExists,
    InvalidStateTransition,
    PermissionDenied,
    ValidationFailed,
)
from core.operations import run
from events.models import Event
from monitoring.models import MonitoringAlert
from tests.accounts.ledger.helpers import fresh, open_account, run_threads
from tests.backoffice.helpers import staff
from tests.backoffice.test_approvals import ACCOUNTS, act, client_of, messages_of
from tests.cards.helpers import issue_card, make_institution
from tests.conftest import Api
from tests.factories import issue_key

pytestmark = pytest.mark.django_db

CARDS = reverse("admin:cards_card_changelist")
THRESHOLDS = reverse("admin:backoffice_approvalthreshold_changelist")


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def account(bank):
    account = open_account(bank, balance=10_000)
    AccountProduct.objects.filter(pk=account.product_id).update(
        allows_overdraft=True, max_overdraft_limit=500_000
    )
    return fresh(account)


@pytest.fixture
def card(account):
    return Card.objects.get(pk=issue_card(account).pk)


@pytest.fixture
def maker(bank):
    return staff("ops-maker", roles=["operations"], institutions=[bank])


@pytest.fixture
def checker(bank):
    return staff("checker-1", roles=["compliance"], institutions=[bank])


def as_(user, service, **arguments):
    """`service` run as the staff user `user`, as the admin runs it (one operation)."""
    return run(service, actor=Actor(user=user), **arguments)


def threshold(bank, kind: str, up_to: int, currency: str = "EUR"):
    return ApprovalThreshold.objects.create(
        institution=bank, kind=kind, currency="" if kind == "pin_unblock" else currency, up_to=up_to
    )


def block_pin(card: Card) -> Card:
    Card.objects.filter(pk=card.pk).update(pin_blocked=True, pin_failed_attempts=3)
    return Card.objects.get(pk=card.pk)


def approve(checker, approval, reason="Checked the file."):
    return as_(checker, approval_approve, approval=approval, reason=reason).value


# --- adjustments and waivers: the threshold decides -------------------------------------------
def test_an_adjustment_within_the_threshold_is_posted_at_once_by_one_user(bank, account, maker):
    threshold(bank, "adjustment", 5_000)
    change = as_(
        maker,
        staff_adjust,
        account=account,
        direction="credit",
        amount=5_000,
        description="Goodwill",
        reason="Ticket 1.",
    ).value
    assert (change.asked, change.approval) == (False, None)
    adjustment = Adjustment.objects.get(pk=change.made)
    assert (adjustment.account_id, adjustment.amount) == (account.pk, 5_000)
    assert fresh(account).posted == 15_000
    assert not ApprovalRequest.objects.exists()
    posted = Event.objects.get(type="adjustment.posted", object_id=adjustment.pk)
    assert (posted.actor_type, posted.actor_id) == ("staff", str(maker.pk))


@pytest.mark.parametrize(
    "setting",
    [None, ("adjustment", 4_999, "EUR"), ("adjustment", 1_000_000, "USD"), ("fee_waiver", 10**9)],
    ids=["no threshold", "one minor unit below", "another currency", "another kind"],
)
def test_an_adjustment_above_or_without_a_threshold_waits(bank, account, maker, setting):
    if setting is not None:
        threshold(bank, *setting)
    change = as_(
        maker,
        staff_adjust,
        account=account,
        direction="credit",
        amount=5_000,
        description="Goodwill",
        reason="Ticket 1.",
    ).value
    assert change.asked
    assert (change.approval.kind, change.approval.status, change.approval.amount) == (
        "adjustment",
        "pending",
        5_000,
    )
    assert fresh(account).posted == 10_000
    assert not Adjustment.objects.filter(account=account, amount=5_000).exists()


def charged(account, amount: int, period: str) -> Fee:
    return run(
        fee_charge, actor=SYSTEM, account=account, kind="monthly", amount=amount, period=period
    ).value


def test_a_fee_within_the_threshold_is_waived_at_once(bank, account, maker):
    fee = charged(account, 300, "2026-01")
    threshold(bank, "fee_waiver", 300)
    change = as_(maker, staff_waive_fee, fee=fee, reason="Goodwill.").value
    assert (change.asked, change.made) == (False, fee.pk)
    fee.refresh_from_db()
    assert (fee.status, fee.waived_by, fee.waiver_reason) == ("waived", maker, "Goodwill.")
    other = charged(account, 301, "2026-02")
    assert as_(maker, staff_waive_fee, fee=other, reason="Goodwill.").value.asked


def test_the_staff_change_refuses_bad_input_before_anything(bank, account, maker):
    threshold(bank, "adjustment", 10**9)
    for amount in (0, -5, True):
        with pytest.raises(ValidationFailed):
            as_(
                maker,
                staff_adjust,
                account=account,
                direction="credit",
                amount=amount,
                reason="Ticket 1.",
            )
    with pytest.raises(ValidationFailed):
        as_(maker, staff_adjust, account=account, direction="credit", amount=100, reason=" ")
    assert fresh(account).posted == 10_000
    assert not ApprovalRequest.objects.exists()


# --- overdraft ---------------------------------------------------------------------------------
def test_a_lower_overdraft_limit_is_set_at_once_a_raise_waits_for_a_second_user(
    account, maker, checker
):
    Account.objects.filter(pk=account.pk).update(overdraft_limit=20_000)
    lowered = as_(maker, staff_set_overdraft_limit, account=fresh(account), limit=5_000, reason="r")
    assert (lowered.changed, lowered.value.asked, fresh(account).overdraft_limit) == (
        True,
        False,
        5_000,
    )
    same = as_(maker, staff_set_overdraft_limit, account=fresh(account), limit=5_000, reason="r")
    assert same.changed is False

    change = as_(
        maker, staff_set_overdraft_limit, account=fresh(account), limit=50_000, reason="Salary"
    ).value
    approval = change.approval
    assert (approval.kind, approval.amount, approval.currency, approval.parameters) == (
        "overdraft_raise",
        50_000,
        "EUR",
        {"overdraft_limit": 50_000},
    )
    assert fresh(account).overdraft_limit == 5_000
    # One raise of an account waits at a time.
    with pytest.raises(AlreadyExists):
        as_(maker, staff_set_overdraft_limit, account=fresh(account), limit=60_000, reason="r")
    # Nobody approves their own request.
    with pytest.raises(PermissionDenied):
        approve(maker, approval)

    approved = approve(checker, approval)
    assert (approved.status, approved.decided_by, approved.result_id) == (
        "approved",
        checker,
        account.pk,
    )
    assert fresh(account).overdraft_limit == 50_000
    changed = Event.objects.get(type="account.overdraft_limit_changed", data__to=50_000)
    assert (changed.actor_type, changed.actor_id) == ("staff", str(checker.pk))


def test_an_overdraft_raise_within_the_threshold_is_set_at_once(bank, account, maker):
    threshold(bank, "overdraft_raise", 30_000)
    change = as_(maker, staff_set_overdraft_limit, account=account, limit=30_000, reason="r")
    assert (change.value.asked, fresh(account).overdraft_limit) == (False, 30_000)
    above = as_(maker, staff_set_overdraft_limit, account=fresh(account), limit=30_001, reason="r")
    assert above.value.asked


def test_an_overdraft_raise_the_product_refuses_is_not_even_asked(account, maker):
    with pytest.raises(ValidationFailed) as refused:
        as_(maker, staff_set_overdraft_limit, account=account, limit=500_001, reason="r")
    assert refused.value.details == {
        "overdraft_limit": f"At most 500000 on product {account.product_id}."
    }
    assert not ApprovalRequest.objects.exists()


def test_an_approval_the_account_no_longer_allows_stays_pending(account, maker, checker):
    approval = as_(
        maker, staff_set_overdraft_limit, account=account, limit=50_000, reason="r"
    ).value.approval
    AccountProduct.objects.filter(pk=account.product_id).update(
        allows_overdraft=False, max_overdraft_limit=0
    )
    with pytest.raises(ValidationFailed):
        approve(checker, approval)
    approval.refresh_from_db()
    assert (approval.status, fresh(account).overdraft_limit) == ("pending", 0)
    rejected = as_(checker, approval_reject, approval=approval, reason="Product changed.").value
    assert rejected.status == "rejected"


# --- card limits -------------------------------------------------------------------------------
def test_lower_card_limits_are_set_at_once_a_raise_waits(card, maker, checker):
    daily, monthly = card.limit_daily, card.limit_monthly
    lowered = as_(
        maker,
        staff_set_card_limits,
        card=card,
        changes={"limit_daily_cash": 0},
        reason="Cardholder asked.",
    )
    assert (lowered.value.asked, Card.objects.get(pk=card.pk).limit_daily_cash) == (False, 0)

    card = Card.objects.get(pk=card.pk)
    change = as_(
        maker,
        staff_set_card_limits,
        card=card,
        changes={"limit_daily": daily + 100, "limit_monthly": monthly + 500, "limit_daily_cash": 0},
        reason="Travelling.",
    ).value
    approval = change.approval
    # Measured by the highest limit raised; only what changes is asked for.
    assert (approval.kind, approval.amount, approval.parameters) == (
        "card_limits_raise",
        monthly + 500,
        {"limits": {"limit_daily": daily + 100, "limit_monthly": monthly + 500}},
    )
    assert Card.objects.get(pk=card.pk).limit_daily == daily
    approved = approve(checker, approval)
    assert approved.result_id == card.pk
    card = Card.objects.get(pk=card.pk)
    assert (card.limit_daily, card.limit_monthly) == (daily + 100, monthly + 500)
    changed = Event.objects.filter(type="card.limits_changed", object_id=card.pk).latest("pk")
    assert changed.actor_id == str(checker.pk)


def test_a_card_limits_raise_within_the_threshold_is_set_at_once(bank, card, maker):
    threshold(bank, "card_limits_raise", card.limit_monthly + 1)
    change = as_(
        maker,
        staff_set_card_limits,
        card=card,
        changes={"limit_monthly": card.limit_monthly + 1},
        reason="r",
    )
    assert change.value.asked is False
    assert Card.objects.get(pk=card.pk).limit_monthly == card.limit_monthly + 1


def test_card_limits_out_of_order_are_refused_and_nothing_is_asked(card, maker):
    with pytest.raises(ValidationFailed) as refused:
        as_(
            maker,
            staff_set_card_limits,
            card=card,
            changes={"limit_per_transaction": card.limit_daily + 1},
            reason="r",
        )
    assert refused.value.details == {"limit_per_transaction": "Must not be above the daily limit."}
    assert not ApprovalRequest.objects.exists()


# --- PIN unblocks ------------------------------------------------------------------------------
def test_without_a_threshold_a_pin_unblock_waits_for_a_second_user(card, maker, checker):
    card = block_pin(card)
    change = as_(maker, staff_unblock_pin, card=card, reason="Identity checked by phone.")
    approval = change.value.approval
    assert (approval.kind, approval.amount, approval.currency) == ("pin_unblock", None, "")
    assert Card.objects.get(pk=card.pk).pin_blocked is True
    with pytest.raises(PermissionDenied):
        approve(maker, approval)

    approved = approve(checker, approval)
    unblock = PinUnblock.objects.get(card=card)
    assert approved.result_id == str(unblock.pk)
    assert (unblock.unblocked_by_user, unblock.reason) == (checker, "Identity checked by phone.")
    assert Card.objects.get(pk=card.pk).pin_blocked is False


def test_a_pin_unblock_is_alone_while_the_card_has_fewer_unblocks_than_the_threshold(
    bank, card, maker, checker
):
    threshold(bank, "pin_unblock", 1)
    card = block_pin(card)
    first = as_(maker, staff_unblock_pin, card=card, reason="Checked.").value
    assert (first.asked, first.made) == (False, str(PinUnblock.objects.get(card=card).pk))
    second = as_(maker, staff_unblock_pin, card=block_pin(card), reason="Checked.").value
    assert second.asked
    # An unblock older than the window no longer counts.
    PinUnblock.objects.update(created_at=timezone.now() - timedelta(days=31))
    as_(checker, approval_reject, approval=second.approval, reason="Asked again below.")
    third = as_(maker, staff_unblock_pin, card=card, reason="Checked.").value
    assert third.asked is False
    assert Card.objects.get(pk=card.pk).pin_blocked is False


def test_an_unblock_approved_after_the_pin_was_unblocked_stays_pending(card, maker, checker):
    approval = as_(maker, staff_unblock_pin, card=block_pin(card), reason="r").value.approval
    Card.objects.filter(pk=card.pk).update(pin_blocked=False)
    with pytest.raises(InvalidStateTransition):
        approve(checker, approval)
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert not PinUnblock.objects.exists()


def test_the_database_keeps_the_new_kinds_whole(bank, card, maker):
    with pytest.raises(IntegrityError), transaction.atomic():
        ApprovalRequest.objects.create(
            institution=bank,
            kind="pin_unblock",
            target_id=card.pk,
            amount=100,
            currency="EUR",
            requested_by=maker,
            request_reason="r",
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        ApprovalRequest.objects.create(
            institution=bank,
            kind="overdraft_raise",
            target_id=card.account_id,
            amount=None,
            currency="",
            requested_by=maker,
            request_reason="r",
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        ApprovalThreshold.objects.create(
            institution=bank, kind="pin_unblock", currency="EUR", up_to=1
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        ApprovalThreshold.objects.create(institution=bank, kind="adjustment", currency="", up_to=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApprovalThreshold.objects.create(
            institution=bank, kind="adjustment", currency="EUR", up_to=-1
        )


# --- in the admin ------------------------------------------------------------------------------
def test_the_admin_asks_for_an_overdraft_raise_and_sets_a_lower_limit_at_once(account, maker):
    client = client_of(maker)
    response = act(
        client,
        ACCOUNTS,
        "change_overdraft_limit",
        [account.pk],
        limit="250.00",
        reason="Salary raise, ticket 9.",
    )
    assert messages_of(response) == [
        ("success", "Asked for 1 change(s): another staff user approves each (Approvals).")
    ]
    approval = ApprovalRequest.objects.get()
    assert (approval.kind, approval.amount) == ("overdraft_raise", 25_000)
    entry = LogEntry.objects.get(object_id=account.pk)
    assert entry.get_change_message() == (
        "Asked for approval: Raise the overdraft limit to 250.00 EUR (approval request "
        f"{approval.pk}; admin action “Change the overdraft limit”; reason: “Salary raise, "
        "ticket 9.”)."
    )
    # The limit typed is read exactly; a bad one shows the form again and asks nothing.
    again = act(client, ACCOUNTS, "change_overdraft_limit", [account.pk], limit="1.001", reason="r")
    assert again.context["form"].errors == {
        "limit": ["EUR has 2 decimal place(s): at most 2 after the point."]
    }
    assert ApprovalRequest.objects.count() == 1


def test_the_admin_changes_card_limits_lower_at_once(card, maker):
    response = act(
        client_of(maker),
        CARDS,
        "change_limits",
        [card.pk],
        limit_per_transaction="1.00",
        limit_daily="2.00",
        limit_monthly="3.00",
        limit_daily_cash="0",
        reason="Cardholder asked.",
    )
    assert messages_of(response) == [
        (
            "success",
            "Made 1 change(s) at once (within the institution's approval threshold, or "
            "lowering a limit).",
        )
    ]
    card = Card.objects.get(pk=card.pk)
    limits = (card.limit_per_transaction, card.limit_daily, card.limit_monthly)
    assert (limits, card.limit_daily_cash) == ((100, 200, 300), 0)
    assert not ApprovalRequest.objects.exists()


def test_only_the_banks_administrators_set_thresholds(bank, checker, admin_client):
    assert client_of(checker).get(THRESHOLDS).status_code == 200  # staff see them
    assert client_of(checker).get(THRESHOLDS + "add/").status_code == 403
    response = admin_client.post(
        THRESHOLDS + "add/",
        {"institution": bank.pk, "kind": "adjustment", "currency": "eur", "up_to_text": "100.50"},
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    saved = ApprovalThreshold.objects.get()
    assert (saved.kind, saved.currency, saved.up_to) == ("adjustment", "EUR", 10_050)
    refused = admin_client.post(
        THRESHOLDS + "add/",
        {"institution": bank.pk, "kind": "pin_unblock", "currency": "EUR", "up_to_text": "2"},
    )
    assert refused.context["adminform"].form.errors == {
        "currency": ["A PIN unblock has no currency: leave it blank."]
    }
    assert ApprovalThreshold.objects.count() == 1


# --- sums: four eyes that cannot be sliced --------------------------------------------------


def adjust(user, account, amount: int):
    """A load of `amount` asked by `user`: the StaffChange (made alone or asked)."""
    return as_(
        user,
        staff_adjust,
        account=account,
        direction="credit",
        amount=amount,
        description="Goodwill",
        reason="Ticket 7.",
    ).value


def made_alone(changes) -> list[bool]:
    return [not change.asked for change in changes]


def test_slices_to_one_account_are_asked_once_their_sum_passes_the_threshold(bank, account, maker):
    """50 x 1,000 under a 1,000 threshold was the hole: now the sum decides. Exactly the
    threshold is alone (<=); a minor unit more is asked."""
    threshold(bank, "adjustment", 1_000)
    ApprovalThreshold.objects.update(daily_up_to=10**9)  # the per-target sum alone here
    changes = [adjust(maker, account, amount) for amount in (400, 400, 201, 200, 1)]
    assert made_alone(changes) == [True, True, False, True, False]
    assert [c.approval.amount for c in changes if c.asked] == [201, 1]
    assert fresh(account).posted == 10_000 + 1_000


def test_the_daily_total_covers_every_account_of_the_user(bank, account, maker):
    threshold(bank, "adjustment", 1_000)
    ApprovalThreshold.objects.update(daily_up_to=1_500)
    other, third = open_account(bank, balance=0), open_account(bank, balance=0)
    changes = [adjust(maker, account, 1_000), adjust(maker, other, 500), adjust(maker, third, 1)]
    assert made_alone(changes) == [True, True, False]


def test_without_a_daily_total_the_threshold_is_the_days_total_too(bank, account, maker):
    """The strict default: what one change may be is what one user does alone in a day."""
    threshold(bank, "adjustment", 1_000)
    other = open_account(bank, balance=0)
    assert made_alone([adjust(maker, account, 1_000), adjust(maker, other, 1)]) == [True, False]


def test_a_change_older_than_24_hours_no_longer_counts(bank, account, maker):
    threshold(bank, "adjustment", 1_000)
    assert made_alone([adjust(maker, account, 1_000)]) == [True]
    now = timezone.now()
    AloneChange.objects.update(created_at=now - timedelta(hours=24) + timedelta(seconds=5))
    assert made_alone([adjust(maker, account, 1)]) == [False]  # 23:59:55 ago: counted
    AloneChange.objects.filter(amount=1_000).update(created_at=now - timedelta(hours=24))
    assert made_alone([adjust(maker, account, 1_000)]) == [True]  # 24 h ago: out


def test_each_user_has_their_own_sum_and_approved_changes_are_not_alone(
    bank, account, maker, checker
):
    threshold(bank, "adjustment", 1_000)
    colleague = staff("ops-2", roles=["operations"], institutions=[bank])
    asked = adjust(maker, account, 1_001)
    approve(checker, asked.approval)  # a second pair of eyes: counts for nobody
    assert made_alone([adjust(maker, account, 1_000), adjust(colleague, account, 1_000)]) == [
        True,
        True,
    ]
    assert AloneChange.objects.count() == 2


def test_fee_waivers_on_one_account_are_summed(bank, account, maker):
    threshold(bank, "fee_waiver", 1_000)
    first, second = charged(account, 600, "2026-01"), charged(account, 600, "2026-02")
    alone = as_(maker, staff_waive_fee, fee=first, reason="Goodwill.").value
    asked = as_(maker, staff_waive_fee, fee=second, reason="Goodwill.").value
    assert made_alone([alone, asked]) == [True, False]
    assert (asked.approval.kind, asked.approval.amount) == ("fee_waiver", 600)


def test_a_limit_raise_is_measured_by_the_limit_it_sets_not_summed(bank, account, maker):
    """Slicing cannot raise a limit past the threshold: each raise is the new limit itself."""
    threshold(bank, "overdraft_raise", 1_000)
    raises = [
        as_(maker, staff_set_overdraft_limit, account=account, limit=limit, reason="r").value
        for limit in (600, 1_000, 1_001)
    ]
    assert made_alone(raises) == [True, True, False]


def test_a_daily_total_is_set_in_the_admin_and_refused_on_a_limit_raise(bank, admin_client):
    response = admin_client.post(
        THRESHOLDS + "add/",
        {
            "institution": bank.pk,
            "kind": "adjustment",
            "currency": "EUR",
            "up_to_text": "100.00",
            "daily_up_to_text": "250.50",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert ApprovalThreshold.objects.values_list("up_to", "daily_up_to").get() == (10_000, 25_050)
    refused = admin_client.post(
        THRESHOLDS + "add/",
        {
            "institution": bank.pk,
            "kind": "card_limits_raise",
            "currency": "EUR",
            "up_to_text": "100.00",
            "daily_up_to_text": "250.00",
        },
    )
    assert refused.context["adminform"].form.errors == {
        "daily_up_to_text": ["A limit raise has no daily total: leave it blank."]
    }
    with pytest.raises(ValidationFailed) as service_refused:
        approval_threshold_set(
            institution=bank, kind="card_limits_raise", currency="EUR", up_to=1, daily_up_to=5
        )
    assert list(service_refused.value.details) == ["daily_up_to"]
    assert ApprovalThreshold.objects.count() == 1


def test_several_alone_made_changes_to_one_account_raise_one_alert(bank, account, maker, settings):
    """Whoever made them: the third alone-made change to the account in 24 hours raises one
    open alert (subject staff_changes, the account, each change); a fourth raises none more."""
    settings.FOUR_EYES_ALERT_CHANGES = 3
    threshold(bank, "adjustment", 10_000)
    ApprovalThreshold.objects.update(daily_up_to=10**9)
    colleague = staff("ops-2", roles=["operations"], institutions=[bank])
    made = [adjust(maker, account, 100), adjust(colleague, account, 100)]
    assert not MonitoringAlert.objects.exists()
    made += [adjust(maker, account, 100), adjust(colleague, account, 100)]

    alert = MonitoringAlert.objects.get()
    assert (alert.subject_type, alert.account_id, alert.card_id, alert.rule_id) == (
        "staff_changes",
        account.pk,
        None,
        None,
    )
    assert (alert.status, alert.action, alert.amount, alert.currency) == (
        "open",
        "alert",
        100,
        "EUR",
    )
    assert alert.subject_id == made[2].made
    assert alert.details == {
        "count": 3,
        "window_seconds": 86400,
        "changes": [
            {"kind": "adjustment", "made_id": change.made, "staff_user_id": user.pk}
            for change, user in zip(made[:3], (maker, colleague, maker), strict=True)
        ],
    }
    raised = Event.objects.get(type="monitoring.alert_raised")
    assert (raised.object_id, raised.data["account_id"], raised.data["subject_type"]) == (
        alert.pk,
        account.pk,
        "staff_changes",
    )
    # The bank sees it through the API as any alert: no rule and no card, its account.
    api = Api("v2", issue_key(bank)[1])
    shown = api.get(f"/monitoring-alerts/{alert.pk}").json()
    assert (shown["ruleId"], shown["kind"], shown["cardId"], shown["accountId"]) == (
        None,
        None,
        None,
        account.pk,
    )
    assert shown["subjectType"] == "staff_changes"


@pytest.mark.django_db(transaction=True)
def test_one_users_slices_racing_are_summed_one_after_the_other(bank, account, maker):
    """Two alone-made adjustments of one user to one account at once, 600 each under a 1,000
    threshold: the user's row is locked while each is summed, so exactly one is made alone and
    the other asked (without the lock both read 0 and both pass)."""
    threshold(bank, "adjustment", 1_000)

    def slice_(index):
        return adjust(maker, account, 600)

    changes = run_threads(2, slice_)
    connection.close()
    assert sorted(made_alone(changes)) == [False, True]
    assert Adjustment.objects.filter(account=account, amount=600).count() == 1
    assert fresh(account).posted == 10_600
