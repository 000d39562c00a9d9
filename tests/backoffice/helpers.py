"""Worlds for the back office's tests: an institution with a row of every model the admin
shows, and staff users in each role, limited or not."""

import importlib
from datetime import date
from fractions import Fraction

from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account
from backoffice.services.thresholds import approval_threshold_set
from institutions.calendar import local_date
from institutions.models import InstitutionAccess
from institutions.services import holiday_add
from interest.calculation import interest_day, to_places
from interest.models import (
    AccrualBook,
    InterestAccrual,
    InterestAdjustment,
    InterestBooking,
    InterestPosting,
    InterestTerms,
)
from interest.rates import rate_text
from payments.models import Rail, SepaProfile
from payments.services.cutoff import cutoff_run
from reconciliation.models import BankStatement
from reconciliation.services.expected_payments import expected_payment_create
from reconciliation.services.matching import reconcile
from reconciliation.services.rules import reconciliation_rule_create
from reconciliation.services.statements import bank_statement_receive
from tests.events.test_actor import (
    AdminWorld,
    _alert,
    _approval_request,
    _failed_delivery,
    _fee,
    _pin_blocked_card,
)
from tests.payments.helpers import (
    ach_profile,
    external_body,
    inbound_credit_file,
    order_body,
    sepa_external_body,
    sepa_profile,
    sepa_settled_order,
    unknown_return_file,
    upload_body,
    usd_account,
    waiting_recall,
)
from tests.reconciliation.test_settlements import settlement_of
from tests.reconciliation.test_statements import DAY

UNKNOWN_PAN = "4000000000000002"


def populated(institution) -> AdminWorld:
    """Made through the API (and the monthly fee as the system): a row of every model the
    back office lists, for `institution`."""
    world = AdminWorld(institution)
    _alert(world)  # first: its rule must see the world's card payment
    world.make("customer", "account", "card", "pan", "hold", "transfer", "batch", "return")
    world.make("increment", "dispute")
    world.make("rule", "endpoint", "event", "decisioningEndpoint")
    world.delivery = _failed_delivery(world)
    world.fee = _fee(world)
    world.approval = _approval_request(world)  # asked for by a staff user "maker"
    blocked = _pin_blocked_card(world)
    assert world.api.patch(f"/cards/{blocked}/pin", {"blocked": False}).status_code == 200
    world.api.post("/card-lookups", {"pan": UNKNOWN_PAN})  # a PAN no card holds
    # Kept in the back office only (docs/calendar.md): no API makes one yet.
    holiday_add(institution=institution, date=date(2026, 12, 25), name="Christmas Day")
    # Set by the bank's administrators in the back office only.
    approval_threshold_set(institution=institution, kind="adjustment", currency="EUR", up_to=5_000)
    _payments(world, institution)
    _interest(world, institution)
    return world


def _interest(world: AdminWorld, institution) -> None:
    """The account product's interest terms from today (through the API) and today's accrual of
    the world's account as the accrual job writes it, with its booking and books: the job
    itself accrues only a day that has ended, and its journal may not be value-dated after it
    is posted. Then the adjustment of the day for 1,000 minor units booked back-valued to it,
    as the accrual job finds it in the same booking, and the day posted as a period of its own
    (the account's first period, from the terms' first day) as the posting job leaves it. A
    small rate: the books' running total stays below half a minor unit, booked 0 with no
    journal, and the posting posts 0 with no journal and carries it all out, as the jobs leave
    such a batch (verify_ledger holds)."""
    today = local_date(institution, timezone.now())
    body = {
        "effectiveDate": today.isoformat(),
        "depositTiers": [{"fromBalance": 0, "rate": "0.01"}],
        "overdraftRate": "0.01",
        "dayCount": "act_365f",
    }
    rid = world["accountProduct"]
    response = world.api.post(f"/products/accounts/{rid}/interest-rates", body)
    assert response.status_code == 201, response.content
    terms = InterestTerms.objects.get(pk=response.json()["termsId"])
    account = Account.objects.get(pk=world["account"])
    day = interest_day(today, account.posted, terms)
    accrual = to_places(day.accrual)
    moved = 1_000 if day.kind == "deposit" else -1_000  # the kind stays the day's
    now = interest_day(today, account.posted + moved, terms)
    difference = to_places(Fraction(to_places(now.accrual)) - Fraction(accrual))
    accrued = accrual + difference
    assert day.kind != "none" and now.kind == day.kind and difference, (day, now)
    assert abs(accrued) < Fraction(1, 2), accrued
    AccrualBook.objects.create(
        institution=institution,
        currency=account.currency,
        accrued_through=today,
        posted_through=today,
        **{f"{day.kind}_accrued": accrued},
    )
    booking = InterestBooking.objects.create(
        institution=institution,
        currency=account.currency,
        day=today,
        deposit_accrued=accrued if day.kind == "deposit" else 0,
        deposit_amount=0,
        overdraft_accrued=accrued if day.kind == "overdraft" else 0,
        overdraft_amount=0,
    )
    InterestAccrual.objects.create(
        institution=institution,
        account=account,
        day=today,
        kind=day.kind,
        balance=day.balance,
        bands=[{"amount": band.amount, "rate": rate_text(band.rate)} for band in day.bands],
        terms=terms,
        fraction=f"{day.fraction.numerator}/{day.fraction.denominator}",
        accrual=accrual,
        booking=booking,
    )
    InterestAdjustment.objects.create(
        institution=institution,
        account=account,
        day=today,
        kind=day.kind,
        balance=now.balance,
        difference=difference,
        found_on=today,
        booking=booking,
    )
    InterestPosting.objects.create(
        institution=institution,
        account=account,
        kind=day.kind,
        first_day=today,
        last_day=today,
        trigger=InterestPosting.Trigger.PERIOD_END,
        terms=terms,
        accrued=accrued,
        carried_in=0,
        amount=0,
        carried_out=accrued,
    )


def _payments(world: AdminWorld, institution) -> None:
    """An ACH profile, an order in a file (its journal), another bank's credit received, a
    return of an entry TX never sent (a notice), a customer's stop payment, a SEPA profile with
    a mandate, a statement of the bank and a card network's settlement."""
    profile = ach_profile(institution)
    usd = usd_account(world.api, world["customer"])
    external = world.api.post("/external-accounts", external_body(world["customer"]))
    assert external.status_code == 201, external.content
    order = order_body(usd, external.json()["externalAccountId"], 2_500)
    assert world.api.post("/payment-orders", order).status_code == 201
    today = timezone.localdate()
    cutoff_run(profile=profile, rail=Rail.ACH, window_date=today, window="23:59")
    number = Account.objects.get(pk=usd).account_number
    upload = upload_body(inbound_credit_file(profile, number, 1_200, today), "credit.ach")
    assert world.api.post("/rail-files", upload).status_code == 201
    returned = upload_body(unknown_return_file(profile, today), "returns.ach")
    assert world.api.post("/rail-files", returned).status_code == 201
    stop = {"accountId": usd, "companyId": "1234509876", "amount": 4_500}
    assert world.api.post("/stop-payments", stop).status_code == 201
    # A SEPA profile and a debtor's mandate on a SEPA external account.
    sepa_profile(institution, creditor_identifier="DE98ZZZ09999999999")
    debtor = world.api.post("/external-accounts", sepa_external_body(world["customer"]))
    assert debtor.status_code == 201, debtor.content
    mandate = {
        "externalAccountId": debtor.json()["externalAccountId"],
        "mandateReference": "MANDATE-0001",
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
    }
    assert world.api.post("/mandates", mandate).status_code == 201
    _sepa_register_and_recalls(world, institution, debtor.json()["externalAccountId"])
    # A day's statement of the bank, with its lines, money announced, a rule, and the
    # statement matched: its breaks (docs/reconciliation.md).
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day.mt940", content=DAY["mt940"]
    )
    expected_payment_create(
        institution=institution, currency="EUR", direction="credit", amount=25_000
    )
    reconciliation_rule_create(
        institution=institution,
        name="By end-to-end id",
        conditions=[{"field": "end_to_end_id", "operator": "equals"}],
        cardinality="one_to_one",
    )
    reconcile(statement=BankStatement.objects.get(pk=statement.pk))
    # A card network's day, with its rows and journals (docs/reconciliation.md).
    settlement_of(institution)


def _sepa_register_and_recalls(world: AdminWorld, institution, sepa_external: str) -> None:
    """The customer's debtor register (a mandate it gave a creditor, a creditor it blocks), a
    recall of a SEPA credit transfer the institution sent, and another bank's recall of an
    instant credit to the world's account, waiting for the answer (docs/payments.md). The
    account's IBANs are issued under a bank code of the institution's own."""
    account = world["account"]
    creditor = {"creditorIdentifier": "DE98ZZZ09999999999"}
    mandate = {**creditor, "mandateReference": "DEBTOR-0001"}
    made = world.api.post(f"/accounts/{account}/debtor-mandates", mandate)
    assert made.status_code == 201, made.content
    world.debtor_mandate = made.json()["debtorMandateId"]
    made = world.api.post(f"/accounts/{account}/blocked-creditors", creditor)
    assert made.status_code == 201, made.content
    world.blocked_creditor = made.json()["blockedCreditorId"]
    world.sepa_order = sepa_settled_order(institution, account, sepa_external, amount=300)
    made = world.api.post(f"/payment-orders/{world.sepa_order}/recalls", {"reason": "CUST"})
    assert made.status_code == 201, made.content
    world.recall = made.json()["recallId"]
    issued = SepaProfile.objects.exclude(iban_bank_code="").count()
    world.inbound_recall = waiting_recall(world.api, account, bank_code=f"{990 + issued}")


def admin_pages(client, institution, registered=None, rows: int = 20):
    """The back office walked as `client` (a superuser): each registered model's changelist
    (`registered`: (model, admin) pairs; default every one, Django's own too), then the
    change pages of up to `rows` of its rows, the institution's for a model that belongs to one.
    Yields (url, response), each answered 200."""
    if registered is None:
        registered = list(admin.site._registry.items())
    for model, model_admin in registered:
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        response = client.get(changelist)
        assert response.status_code == 200, changelist
        yield changelist, response
        path = getattr(model_admin, "get_institution_path", lambda: None)()
        objects = model_admin.get_queryset(response.wsgi_request)
        if path is not None:
            objects = objects.filter(**{path: institution.pk})
        for pk in objects.values_list("pk", flat=True)[:rows]:
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[pk])
            page = client.get(url)
            assert page.status_code == 200, url
            yield url, page


def staff(username: str, *, roles=(), institutions=(), everywhere=False) -> User:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.groups.set(Group.objects.filter(name__in=roles))
    for institution in institutions:
        InstitutionAccess.objects.create(user=user, institution=institution)
    if everywhere:
        user.user_permissions.add(Permission.objects.get(codename="work_on_all_institutions"))
    return User.objects.get(pk=user.pk)  # no permission cache


def request_of(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def restore_roles() -> None:
    """The groups as institutions/migrations/0003_staff_roles.py makes them, after a
    transactional test emptied the tables (Django makes the permissions again itself)."""
    roles = importlib.import_module("institutions.migrations.0003_staff_roles").ROLES
    # Codenames renamed since with their model (`Transaction` -> `StatementLine`).
    renamed = importlib.import_module("accounts.migrations.0026_statement_line").PERMISSIONS_RENAMED
    for name, permissions in roles.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
            for app_label, codename in (renamed.get(pair, pair) for pair in permissions)
        )
    # And what later migrations granted them (decisioning/migrations/0002_staff_roles_view.py,
    # authorizations/migrations/0009_staff_roles_view_increments.py,
    # institutions/migrations/0006_staff_roles_view_holidays.py).
    views = Permission.objects.filter(
        content_type__app_label__in=["decisioning", "authorizations", "institutions"],
        codename__in=["view_decisioningendpoint", "view_authorizationincrement", "view_holiday"],
    )
    for group in Group.objects.filter(name__in=roles):
        group.permissions.add(*views)
    # disputes/, backoffice/ and payments/migrations/0003_staff_roles.py.
    for app_label in ("disputes", "backoffice", "payments"):
        granted = importlib.import_module(f"{app_label}.migrations.0003_staff_roles").ROLES
        for name, codenames in granted.items():
            Group.objects.get(name=name).permissions.add(
                *Permission.objects.filter(
                    content_type__app_label=app_label, codename__in=codenames
                )
            )
    # backoffice/migrations/0011_exports_and_audit.py: the audit page, for its auditors.
    audit = importlib.import_module("backoffice.migrations.0011_exports_and_audit")
    view = Permission.objects.get(
        content_type__app_label="backoffice", codename="view_staffactivity"
    )
    for group in Group.objects.filter(name__in=audit.AUDITORS):
        group.permissions.add(view)
    # reconciliation/migrations/0002_staff_roles.py and 0004_network_settlement_roles.py: every
    # role views the bank's statements and the card networks' settlements.
    for name in ("0002_staff_roles", "0004_network_settlement_roles"):
        granted = importlib.import_module(f"reconciliation.migrations.{name}")
        viewed = Permission.objects.filter(
            content_type__app_label="reconciliation", codename__in=granted.VIEW
        )
        for group in Group.objects.filter(name__in=granted.ROLES):
            group.permissions.add(*viewed)
    # payments/migrations/0009_sepa_staff_roles.py: every role views SEPA profiles and mandates.
    sepa = importlib.import_module("payments.migrations.0009_sepa_staff_roles")
    viewed = Permission.objects.filter(content_type__app_label="payments", codename__in=sepa.VIEW)
    for group in Group.objects.filter(name__in=sepa.ROLES):
        group.permissions.add(*viewed)
    # reconciliation/migrations/0006_staff_roles_matching.py: and expected payments, rules and
    # breaks.
    matching = importlib.import_module("reconciliation.migrations.0006_staff_roles_matching")
    viewed = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=matching.VIEW
    )
    for group in Group.objects.filter(name__in=matching.ROLES):
        group.permissions.add(*viewed)
    # reconciliation/migrations/0011_staff_roles_breaks.py: operations works the breaks.
    breaks = importlib.import_module("reconciliation.migrations.0011_staff_roles_breaks")
    changed = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=breaks.CHANGE
    )
    for group in Group.objects.filter(name__in=breaks.ROLES):
        group.permissions.add(*changed)
    # backoffice/migrations/0016_interest_roles.py: every role views interest terms and
    # accruals.
    interest = importlib.import_module("backoffice.migrations.0016_interest_roles")
    viewed = Permission.objects.filter(
        content_type__app_label="interest", codename__in=interest.VIEW
    )
    for group in Group.objects.filter(name__in=interest.ROLES):
        group.permissions.add(*viewed)
    # backoffice/migrations/0018_interest_posting_roles.py: and the interest postings and
    # adjustments.
    postings = importlib.import_module("backoffice.migrations.0018_interest_posting_roles")
    viewed = Permission.objects.filter(
        content_type__app_label="interest", codename__in=postings.VIEW
    )
    for group in Group.objects.filter(name__in=postings.ROLES):
        group.permissions.add(*viewed)
    # backoffice/migrations/0017_sepa_register_and_recall_roles.py: every role views the
    # debtor register and the SEPA recalls.
    register = importlib.import_module("backoffice.migrations.0017_sepa_register_and_recall_roles")
    viewed = Permission.objects.filter(
        content_type__app_label="payments", codename__in=register.VIEW
    )
    for group in Group.objects.filter(name__in=register.ROLES):
        group.permissions.add(*viewed)
    # payments/migrations/0005_stop_payment_roles.py, cards/migrations/0014_protect_card.py,
    # backoffice/migrations/0005_staff_roles_thresholds.py: every role views stop payments and
    # the approval thresholds, and protects a card.
    for app_label, codename in (
        ("payments", "view_stoppayment"),
        ("cards", "protect_card"),
        ("backoffice", "view_approvalthreshold"),
    ):
        permission = Permission.objects.get(content_type__app_label=app_label, codename=codename)
        for group in Group.objects.filter(name__in=("support", "operations", "compliance")):
            group.permissions.add(permission)
