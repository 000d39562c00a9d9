"""Every event names its actor (docs/events.md): the API key of the request, the staff user of
the admin, the system for periodic jobs.

The API's write operations and the admin's actions are not listed by hand: they are found by
walking the URL resolver (`tests.api.test_scopes.OPERATIONS`) and `admin.site._registry`, so an
operation or an action added later fails here until it is covered (and a forgotten entry point,
one that sets no actor, shows up as events of the system).
"""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, Hold
from accounts.services import fee_charge
from backoffice.models import Case
from backoffice.services.approvals import approval_request_adjustment
from core.actors import SYSTEM, Actor, acting_as, current_actor
from core.operations import run
from events.models import Event
from institutions import scopes
from jobs import tasks
from monitoring.models import MonitoringAlert
from payments.models import InboundEntry
from reconciliation.models import ReconciliationBreak
from reconciliation.services.breaks import CREDIT, break_book
from reconciliation.services.matching import reconcile
from reconciliation.services.statements import bank_statement_receive
from sandbox.simulated_bank import Incoming, simulated_bank_send
from tests.api.test_scopes import OPERATIONS, World, dispute_body, request_of, send
from tests.cards.helpers import make_institution, new_card
from tests.conftest import Api, body_of
from tests.factories import issue_key
from tests.jobs.helpers import authorizations, expired_holds, expiring_in
from tests.payments.conftest import rails_dir  # noqa: F401 (the simulated bank's folders)
from tests.payments.helpers import ach_bank, local, rails_at
from tests.payments.test_orders import business_day
from tests.reconciliation.test_matching import mt940
from tests.reconciliation.test_settlements import late_presentment
from webhooks.models import WebhookDelivery
from webhooks.services.deliveries import payload

pytestmark = pytest.mark.django_db

HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def events_since(known: set[str]) -> list[Event]:
    return list(Event.objects.exclude(pk__in=known).order_by("pk"))


def event_ids() -> set[str]:
    return set(Event.objects.values_list("pk", flat=True))


def listed_ids(api: Api, **params) -> list[str]:
    response = api.get("/events", {"limit": 100, **params})
    assert response.status_code == 200, response.content
    return [event["id"] for event in response.json()["data"]]


# --- every write of the API: its events name the request's key -------------------------------
WRITES = [op for op in OPERATIONS if op.method != "GET"]
# Writes that record no event: they look something up, check a PIN, change a webhook
# endpoint (no event type for those: docs/events.md), test a decisioning endpoint (it changes
# nothing: docs/decisioning.md) or preview interest terms (nothing written: docs/interest.md).
EMIT_NOTHING = {
    ("POST", "/account-lookups"),
    ("POST", "/card-lookups"),
    # The world's account has no interest terms: nothing to post (tests/interest/test_posting.py
    # checks the key on a settlement's `interest.posted`).
    ("POST", "/accounts/{accountId}/interest/settlements"),
    ("POST", "/cards/{cardId}/pin-verifications"),
    ("POST", "/webhook-endpoints"),
    ("PATCH", "/webhook-endpoints/{endpointId}"),
    ("POST", "/decisioning-endpoints/{endpointId}/tests"),
    ("POST", "/products/accounts/{productRid}/interest-previews"),
}


def test_the_writes_are_found():
    assert len(WRITES) > 50
    routes = {(op.method, op.route) for op in WRITES}
    assert EMIT_NOTHING <= routes


@pytest.mark.parametrize("operation", WRITES, ids=lambda op: op.id)
def test_every_api_write_names_its_key_on_every_event(operation, institution):
    world = World(operation.version, institution)  # made with a key of its own
    request = request_of(operation, world)
    api_key, secret = issue_key(institution, scopes=scopes.ALL)
    caller = Api(operation.version, secret)
    before = event_ids()

    response = send(caller, request)

    assert response.status_code in (200, 201), response.content
    assert current_actor() == SYSTEM  # the request's actor ended with it
    emitted = events_since(before)
    route = ("PATCH" if operation.alias else operation.method, operation.route)
    if route in EMIT_NOTHING:
        assert emitted == []
        return
    assert emitted, f"{operation.id} emitted no event"
    assert {(e.actor_type, e.actor_id) for e in emitted} == {("apiKey", api_key.pk)}
    # And the API shows them, and finds exactly them by actor.
    assert sorted(listed_ids(caller, actorId=api_key.pk)) == [e.pk for e in emitted]
    shown = caller.get(f"/events/{emitted[0].pk}")
    assert body_of(shown, operation.version)["actor"] == {"type": "apiKey", "id": api_key.pk}


def test_a_refusal_keeps_its_surviving_event_with_the_key_as_actor(institution, settings):
    """`security.pan_guessing_suspected` is written after the refused request rolled back
    (`core.operations.keep_if_refused`), still inside the request: it names the key too."""
    settings.PAN_GUESSING_MAX_FAILURES = 1
    api_key, secret = issue_key(institution, scopes=scopes.ALL)
    api = Api("v2", secret)
    before = event_ids()
    for _ in range(2):
        api.post("/card-lookups", {"pan": "4000000000000002"})
    emitted = events_since(before)
    assert [e.type for e in emitted] == ["security.pan_guessing_suspected"]
    assert (emitted[0].actor_type, emitted[0].actor_id) == ("apiKey", api_key.pk)


# --- every admin action: its events name the staff user ---------------------------------------
class AdminWorld(World):
    def __init__(self, institution):
        super().__init__("v2", institution)


def _account(world: World, status: str | None = None) -> str:
    body = {"customerId": world["customer"], "productRid": world["accountProduct"]}
    account_id = body_of(world.api.post("/accounts", body), "v2")["accountId"]
    if status:
        assert world.api.patch(f"/accounts/{account_id}", {"status": status}).status_code == 200
    return account_id


def _account_with_overdraft(world: World) -> str:
    """An account whose overdraft limit staff may lower (at once: no approval)."""
    account_id = _account(world)
    Account.objects.filter(pk=account_id).update(overdraft_limit=500)
    return account_id


def _card(world: World, status: str | None = None) -> str:
    body = {
        "accountId": world["account"],
        "customerId": world["customer"],
        "cardProductRid": world["cardProduct"],
        "form": "virtual",
        "status": "active",
    }
    card_id = body_of(world.api.post("/cards", body), "v2")["cardId"]
    if status:
        assert world.api.patch(f"/cards/{card_id}", {"status": status}).status_code == 200
    return card_id


def _pin_blocked_card(world: World) -> str:
    card_id = world["card"]  # its PIN is 4821
    for _ in range(3):
        world.api.post(f"/cards/{card_id}/pin-verifications", {"pin": "0000"})
    return card_id


def _rule(world: World, enabled: bool) -> str:
    body = {"name": "r", "kind": "blocked_country", "action": "alert", "countries": ["408"]}
    rule_id = body_of(world.api.post("/monitoring-rules", {**body, "enabled": enabled}), "v2")
    return rule_id["ruleId"]


def _alert(world: World) -> str:
    body = {"name": "m", "kind": "blocked_mcc", "action": "alert", "mccs": ["5411"]}
    assert world.api.post("/monitoring-rules", body).status_code in (200, 201)
    world["authorization"]  # a grocery payment: the rule fires
    return MonitoringAlert.objects.latest("pk").pk


def _unassigned_alert(world: World) -> str:
    """The world's alert (one: its payment raised it), assigned to nobody again (an action
    before may have assigned it)."""
    alert_id = _alert(world)
    Case.objects.filter(object_id=alert_id).update(assignee=None)
    return alert_id


def _endpoint(world: World, enabled: bool) -> str:
    body = {"url": "http://127.0.0.1:9/admin-test", "eventTypes": ["*"], "enabled": enabled}
    return body_of(world.api.post("/webhook-endpoints", body), "v2")["endpointId"]


def _failed_delivery(world: World) -> str:
    world["endpoint"]
    customer = {"firstName": "Hedy", "lastName": "L", "countryId": "276"}
    assert world.api.post("/customers", customer).status_code in (200, 201)  # delivered to it
    delivery = WebhookDelivery.objects.latest("pk")
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.Status.FAILED, completed_at=timezone.now(), next_attempt_at=None
    )
    return delivery.pk


def _fee(world: World) -> str:
    """A charged fee (the monthly job's, as the system) on the world's funded account."""
    account = Account.objects.get(pk=world["account"])
    fee = run(
        fee_charge, actor=SYSTEM, account=account, kind="monthly", amount=100, period="2026-01"
    ).value
    assert fee.status == "charged"
    return fee.pk


def _api_key(world: AdminWorld) -> str:
    return issue_key(world.institution)[0].pk


def _approval_request(world: World) -> str:
    """A load of 1.00 EUR on the world's account, asked for by another staff user (nobody
    decides their own request)."""
    maker, _ = User.objects.get_or_create(username="maker", defaults={"is_staff": True})
    return run(
        approval_request_adjustment,
        actor=Actor(user=maker),
        account=Account.objects.get(pk=world["account"]),
        direction="credit",
        amount=100,
        description="Goodwill",
        reason="Ticket 4711.",
    ).value.pk


def _bank(world: AdminWorld):
    """The world's institution sending ACH (an order above 1,000.00 waits for a person)."""
    if not hasattr(world, "bank"):
        world.bank = ach_bank(
            institution=world.institution, load_amount=500_000, approval_above=100_000
        )
        world.bank.landlord = world.bank.external("000123456789")["externalAccountId"]
    return world.bank


def _order(world: AdminWorld, amount: int) -> str:
    bank = _bank(world)
    return bank.ordered(bank.landlord, amount)["paymentOrderId"]


def _external_account(world: AdminWorld) -> str:
    return _bank(world).external("000987654321")["externalAccountId"]


def _in_suspense(world: AdminWorld, amount: int) -> str:
    """Another bank's credit for no account of the bank's, in suspense; staff would apply it
    to the bank's account (`world.form_values`)."""
    bank = _bank(world)
    day = business_day()
    simulated_bank_send(
        institution=bank.institution,
        entries=[Incoming("credit", "555566667777", amount)],
        settles_on=day,
    )
    rails_at(local(day, 17))
    world.form_values = {"account_id": bank.account_id}
    return InboundEntry.objects.get(status=InboundEntry.Status.SUSPENSE, amount=amount).pk


def _break(world: AdminWorld, mark: str = "C", amount: int | None = None) -> str:
    """A `bank_only` break of the world's institution: yesterday's statement of one line (`mark`
    C or D) nothing matches; `amount` 0: a break of no difference beside it (none is opened by a
    run, only such a break is resolved without money)."""
    cents = 1_000 + ReconciliationBreak.objects.count()  # each statement its own bytes
    day = timezone.localdate(timezone.now()) - timedelta(days=1)
    statement, _ = bank_statement_receive(
        institution=world.institution,
        fmt="mt940",
        name="day.mt940",
        content=mt940(day, [(mark, cents, "/REMI/UNKNOWN")]),
    )
    reconcile(statement=statement)
    brk = ReconciliationBreak.objects.get(statement=statement, kind="bank_only")
    if amount is None:
        return brk.pk
    return ReconciliationBreak.objects.create(
        institution=world.institution,
        kind="amount_mismatch",
        amount=amount,
        currency=brk.currency,
        statement=statement,
        run=brk.run,
    ).pk


def _credit_in_suspense(world: AdminWorld) -> str:
    """A `bank_only` credit of the world's institution booked to suspense (by the service, as
    an approval would); staff would place it on the bank's USD account (`world.form_values`)."""
    pk = _break(world)
    run(break_book, actor=SYSTEM, brk=ReconciliationBreak.objects.get(pk=pk), how=CREDIT)
    world.form_values = {"account_id": _bank(world).account_id}
    return pk


def _late_presentment(world: AdminWorld) -> str:
    """A `network_only` break of the world's institution: its pending authorization, settled
    by the network today and not cleared by TX."""
    return late_presentment(world.institution, world["pending_authorization"], 1_000).pk


# (model label, action) -> (an object the action changes, the event type it must emit or None)
def _dispute(world: World, *moves: tuple[str, dict]) -> str:
    """A new dispute of the world's presented payment, moved by `moves` ((path, body): a
    transition or a network message)."""
    dispute_id = body_of(world.api.post("/disputes", dispute_body(world)), "v2")["disputeId"]
    for path, body in moves:
        response = world.api.post(f"/disputes/{dispute_id}/{path}", body)
        assert response.status_code == 201, response.content
    return dispute_id


SUBMITTED = ("transitions", {"to": "submitted"})
REPRESENTED = [
    SUBMITTED,
    ("network-messages", {"type": "chargeback_accepted"}),
    ("network-messages", {"type": "representment_received"}),
]

ACTIONS = {
    ("accounts.account", "freeze_accounts"): (lambda w: _account(w), "account.status_changed"),
    ("accounts.account", "activate_accounts"): (
        lambda w: _account(w, "frozen"),
        "account.status_changed",
    ),
    ("accounts.account", "close_accounts"): (lambda w: _account(w), "account.status_changed"),
    ("accounts.hold", "release_holds"): (lambda w: w["hold"], "hold.released"),
    # Four eyes (docs/back-office.md): staff ask, another staff user decides.
    ("accounts.fee", "waive_fees"): (_fee, "approval.requested"),
    ("accounts.account", "request_adjustment"): (lambda w: _account(w), "approval.requested"),
    # A lower limit is set at once; a raise above the threshold is asked for.
    ("accounts.account", "change_overdraft_limit"): (
        _account_with_overdraft,
        "account.overdraft_limit_changed",
    ),
    ("cards.card", "change_limits"): (lambda w: _card(w), "card.limits_changed"),
    ("backoffice.approvalrequest", "approve_requests"): (_approval_request, "approval.approved"),
    ("backoffice.approvalrequest", "reject_requests"): (_approval_request, "approval.rejected"),
    ("transfers.transfer", "reverse_transfers"): (lambda w: w["transfer"], "transfer.reversed"),
    ("cards.card", "activate_cards"): (lambda w: _card(w, "suspended"), "card.status_changed"),
    ("cards.card", "suspend_cards"): (lambda w: _card(w), "card.status_changed"),
    ("cards.card", "close_cards"): (lambda w: _card(w), "card.status_changed"),
    # The protective actions every role may run (docs/back-office.md, "What support may do").
    ("cards.card", "freeze_cards"): (lambda w: _card(w), "card.status_changed"),
    ("cards.card", "unfreeze_cards"): (lambda w: _card(w, "suspended"), "card.status_changed"),
    ("cards.card", "block_cards"): (lambda w: _card(w), "card.status_changed"),
    # With no threshold set, every staff unblock waits for a second user.
    ("cards.card", "unblock_pins"): (_pin_blocked_card, "approval.requested"),
    ("monitoring.monitoringrule", "enable_rules"): (
        lambda w: _rule(w, False),
        "monitoring.rule_updated",
    ),
    ("monitoring.monitoringrule", "disable_rules"): (
        lambda w: _rule(w, True),
        "monitoring.rule_updated",
    ),
    ("monitoring.monitoringalert", "resolve_alerts"): (_alert, "monitoring.alert_resolved"),
    # Case work (docs/back-office.md, "Case work"): each note and assignment is an event.
    ("monitoring.monitoringalert", "add_notes"): (_alert, "monitoring.alert_note_added"),
    ("monitoring.monitoringalert", "assign_to_me"): (_alert, "monitoring.alert_assigned"),
    ("monitoring.monitoringalert", "assign"): (_unassigned_alert, "monitoring.alert_assigned"),
    ("disputes.dispute", "add_notes"): (_dispute, "dispute.note_added"),
    ("disputes.dispute", "assign_to_me"): (_dispute, "dispute.assigned"),
    ("disputes.dispute", "assign"): (_dispute, "dispute.assigned"),
    ("reconciliation.reconciliationbreak", "add_notes"): (
        _break,
        "reconciliation_break.note_added",
    ),
    ("reconciliation.reconciliationbreak", "assign_to_me"): (
        _break,
        "reconciliation_break.assigned",
    ),
    ("reconciliation.reconciliationbreak", "assign"): (_break, "reconciliation_break.assigned"),
    # A break's money is booked through four eyes; one of no difference is resolved at once.
    ("reconciliation.reconciliationbreak", "book_credit"): (_break, "approval.requested"),
    ("reconciliation.reconciliationbreak", "book_fee"): (
        lambda w: _break(w, "D"),
        "approval.requested",
    ),
    ("reconciliation.reconciliationbreak", "force_post"): (_late_presentment, "approval.requested"),
    ("reconciliation.reconciliationbreak", "place_credit"): (
        _credit_in_suspense,
        "approval.requested",
    ),
    ("reconciliation.reconciliationbreak", "resolve_without_money"): (
        lambda w: _break(w, amount=0),
        "reconciliation_break.resolved",
    ),
    # Webhook endpoints, deliveries and API keys have no event types (docs/events.md).
    ("webhooks.webhookendpoint", "enable_endpoints"): (lambda w: _endpoint(w, False), None),
    ("webhooks.webhookendpoint", "disable_endpoints"): (lambda w: _endpoint(w, True), None),
    ("webhooks.webhookdelivery", "retry_deliveries"): (_failed_delivery, None),
    ("institutions.apikey", "revoke_keys"): (_api_key, None),
    ("institutions.apikey", "rotate_keys"): (_api_key, None),
    ("institutions.apikey", "rotate_keys_now"): (_api_key, None),
    ("disputes.dispute", "submit"): (_dispute, "dispute.stage_changed"),
    ("disputes.dispute", "grant_credit"): (_dispute, "dispute.updated"),
    ("disputes.dispute", "deny"): (lambda w: _dispute(w, SUBMITTED), "dispute.closed"),
    ("disputes.dispute", "withdraw"): (_dispute, "dispute.closed"),
    ("disputes.dispute", "write_off"): (lambda w: _dispute(w, *REPRESENTED), "dispute.closed"),
    ("disputes.dispute", "cardholder_bears"): (
        lambda w: _dispute(w, *REPRESENTED),
        "dispute.closed",
    ),
    ("payments.paymentorder", "approve_orders"): (
        lambda w: _order(w, 150_000),
        "payment_order.approved",
    ),
    ("payments.paymentorder", "cancel_orders"): (
        lambda w: _order(w, 2_500),
        "payment_order.cancelled",
    ),
    ("payments.externalaccount", "verify_external_accounts"): (
        _external_account,
        "external_account.verified",
    ),
    # Money placed from suspense always takes a second person.
    ("payments.inboundentry", "apply_from_suspense"): (
        lambda w: _in_suspense(w, 700),
        "approval.requested",
    ),
    ("payments.inboundentry", "return_from_suspense"): (
        lambda w: _in_suspense(w, 800),
        "approval.requested",
    ),
}


def _ours(model) -> bool:
    """A model of this project (not Django's, procrastinate's or django-axes's)."""
    path = Path(model._meta.app_config.path)
    return path.is_relative_to(settings.BASE_DIR) and ".venv" not in path.parts


def admin_actions(user) -> set[tuple[str, str]]:
    """Every action of every ModelAdmin of the project's models, as `user` is offered them."""
    request = RequestFactory().get("/admin/")
    request.user = user
    return {
        (model._meta.label_lower, name)
        for model, model_admin in admin.site._registry.items()
        if _ours(model)
        for name in model_admin.get_actions(request)
    }


# What a confirmation page's field takes when free text would not do.
FORM_VALUES = {
    "direction": "credit",
    "amount": "1.00",
    "limit": "1.00",  # an overdraft limit
    "code": "R03",  # a return's reason
    **dict.fromkeys(
        ["limit_per_transaction", "limit_daily", "limit_monthly", "limit_daily_cash"], "1.00"
    ),
}


def run_action(client, label: str, action: str, pk: str, values: dict = FORM_VALUES):
    """Start the action on one object; answer its confirmation page when it shows one (each
    text field of its form filled in, the others from `FORM_VALUES`), as staff would."""
    app_label, model_name = label.split(".")
    url = reverse(f"admin:{app_label}_{model_name}_changelist")
    data = {"action": action, "index": "0", "select_across": "0", "_selected_action": [pk]}
    response = client.post(url, data)
    context = getattr(response, "context", None)
    if response.status_code == 200 and context is not None and "confirm_name" in context:
        confirmed = {}
        for name, value in HIDDEN_INPUT.findall(response.content.decode()):
            confirmed.setdefault(name, []).append(value)
        for name, field in context["form"].fields.items():
            if name in values:
                confirmed[name] = values[name]
            elif isinstance(field, forms.ChoiceField):  # a reason code, say: the first offered
                confirmed[name] = next(value for value, _ in field.choices if value)
            else:
                confirmed[name] = "Checked with the cardholder by phone."
        response = client.post(url, confirmed)
    assert response.status_code in (200, 302), (label, action, response.status_code)
    return response


@pytest.mark.usefixtures("rails_dir")
def test_every_admin_action_names_the_staff_user_on_every_event(admin_client, admin_user):
    assert admin_actions(admin_user) == set(ACTIONS), "cover each admin action in ACTIONS"
    world = AdminWorld(make_institution())
    staff = ("staff", str(admin_user.pk))
    for (label, action), (make, event_type) in ACTIONS.items():
        pk = make(world)
        before = event_ids()
        run_action(
            admin_client, label, action, pk, {**FORM_VALUES, **getattr(world, "form_values", {})}
        )
        emitted = events_since(before)
        if event_type is not None:
            assert event_type in {e.type for e in emitted}, (label, action, emitted)
        assert {(e.actor_type, e.actor_id) for e in emitted} <= {staff}, (label, action)
    # The staff user's events are found by their id too.
    api = world.api
    assert listed_ids(api, actorId=str(admin_user.pk)) == list(
        Event.objects.filter(actor_id=str(admin_user.pk)).values_list("pk", flat=True)
    )
    assert listed_ids(api, actorId=str(admin_user.pk))


def test_an_admin_change_form_names_the_staff_user(admin_client, admin_user):
    world = World("v2", make_institution())
    customer_id = world["customer"]
    # The customer's form is a step from their page (docs/back-office.md, "The customer page").
    page = admin_client.get(
        reverse("admin:customers_customer_change", args=[customer_id]), {"edit": "1"}
    )
    form = page.context["adminform"].form
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data["email"] = "ada.staff@example.com"
    data = {name: value for name, value in data.items() if value is not None}
    before = event_ids()
    response = admin_client.post(
        reverse("admin:customers_customer_change", args=[customer_id]), data
    )
    assert response.status_code == 302, response.content
    emitted = events_since(before)
    assert [e.type for e in emitted] == ["customer.updated"]
    assert (emitted[0].actor_type, emitted[0].actor_id) == ("staff", str(admin_user.pk))


# --- periodic jobs: the system -----------------------------------------------------------------
def test_periodic_jobs_name_the_system(api):
    # A request first, on this thread: its actor must not outlive it.
    customer = {"firstName": "A", "lastName": "B", "countryId": "276"}
    assert api.post("/customers", customer).status_code in (200, 201)
    holds = expired_holds(1, accounts=1)
    stale, _ = authorizations(1_000, 500)
    Hold.objects.filter(pk=stale.hold_id).update(expires_at=timezone.now())
    fi = make_institution()
    ended = expiring_in(new_card(fi, status="active"), -1)
    due = expiring_in(new_card(fi, status="active"), 0)
    before = event_ids()

    assert tasks.expire_holds(timestamp=0) == {
        "holds": len(holds),
        "authorizations": 1,
        "transfers": 0,
    }
    assert tasks.renew_expiring_cards(timestamp=0)["renewed"] == 1
    tasks.purge_idempotency_keys(timestamp=0)

    emitted = events_since(before)
    assert {e.type for e in emitted} >= {
        "hold.expired",
        "authorization.expired",
        "card.status_changed",
        "card.renewed",
    }, [e.type for e in emitted]
    assert {(e.actor_type, e.actor_id) for e in emitted} == {("system", None)}
    assert {ended.pk, due.pk} <= {e.object_id for e in emitted}


# --- the actor itself ----------------------------------------------------------------------------
def test_acting_as_restores_the_previous_actor_even_on_error(key):
    assert current_actor() == SYSTEM
    with pytest.raises(RuntimeError), acting_as(Actor(api_key=key[0])):
        assert current_actor().type == "apiKey"
        raise RuntimeError
    assert current_actor() == SYSTEM


def test_filter_by_actor_pages_and_keeps_to_the_institution(institution, other_institution):
    first_key, first_secret = issue_key(institution)
    second_key, second_secret = issue_key(institution)
    first, second = Api("v2", first_secret), Api("v2", second_secret)
    theirs = Api("v1", issue_key(other_institution)[1])
    body = {"firstName": "A", "lastName": "B", "countryId": "276"}
    for api in (first, second, first, first, theirs):
        assert api.post("/customers", body).status_code in (200, 201)

    mine = list(
        Event.objects.filter(actor_id=first_key.pk).order_by("-pk").values_list("pk", flat=True)
    )
    assert len(mine) == 3
    page = second.get("/events", {"actorId": first_key.pk, "limit": 2}).json()
    rest = second.get(
        "/events", {"actorId": first_key.pk, "limit": 2, "cursor": page["nextCursor"]}
    ).json()
    assert [e["id"] for e in page["data"] + rest["data"]] == mine
    assert {e["actor"]["id"] for e in page["data"]} == {first_key.pk}
    assert listed_ids(second, actorId=second_key.pk) != []
    assert listed_ids(theirs, actorId=first_key.pk) == []  # another institution's key
    assert listed_ids(first, actorId="key_00000000000000000000000000") == []


def test_the_webhook_payload_carries_the_actor(api, key):
    endpoint = {"url": "http://127.0.0.1:9/hooks", "eventTypes": ["customer.created"]}
    assert api.post("/webhook-endpoints", endpoint).status_code in (200, 201)
    customer = {"firstName": "A", "lastName": "B", "countryId": "276"}
    assert api.post("/customers", customer).status_code in (200, 201)
    delivery = WebhookDelivery.objects.select_related("event").get()

    body = json.loads(payload(delivery.event))

    assert body["actor"] == {"type": "apiKey", "id": key[0].pk}
    assert body["type"] == "customer.created"


def test_events_written_before_actors_were_recorded_show_none(api, key):
    customer = {"firstName": "A", "lastName": "B", "countryId": "276"}
    assert api.post("/customers", customer).status_code in (200, 201)
    event = Event.objects.get()
    Event.objects.filter(pk=event.pk).update(actor_type=None, actor_id=None)  # as migrated

    response = api.get(f"/events/{event.pk}")

    assert body_of(response, api.version)["actor"] is None


def test_the_database_refuses_an_actor_without_its_id(institution):
    with pytest.raises(IntegrityError), transaction.atomic():
        Event.objects.create(
            institution=institution,
            type="customer.created",
            object_type="customer",
            object_id="cus_1",
            actor_type="apiKey",
            actor_id=None,
        )
