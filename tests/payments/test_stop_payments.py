"""Stop payments (issue 49 item 4; docs/payments.md, "Stop payments"): a customer of TX stops an
originator's ACH debits to their account, over HTTP; the simulated bank's debits it matches
are returned R08 in TX's next file, the money never moved and the ledger whole; an amount-limited,
an expired or a cancelled stop stops nothing else; a credit is never stopped."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import Account
from accounts.verification import ledger_breaches
from events.models import Event
from payments.models import InboundEntry, StopPayment
from sandbox.simulated_bank import Incoming
from tests.accounts.api.helpers import created
from tests.api.test_scopes import snapshot
from tests.payments.helpers import ach_bank, local, rails_at, usd_account
from tests.payments.test_inbound import number_of, returned_in_next_file, send
from tests.payments.test_orders import business_day, internal

pytestmark = pytest.mark.django_db

BILLER = "1234509876"  # the Company Identification of the biller's batch header


def domain() -> dict:
    """Every table but the idempotency records (a 422 is stored for its key's replay)."""
    return {table: rows for table, rows in snapshot().items() if table != "api_idempotencyrecord"}


def iso(instant) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def stop(bank, **fields) -> dict:
    body = {"accountId": bank.account_id, "companyId": BILLER, **fields}
    return created(bank.api.post("/stop-payments", body), "v2")


def debit(bank, amount, company_id=BILLER, **fields) -> Incoming:
    return Incoming(
        "debit", number_of(bank), amount, company_name="City Power", company_id=company_id, **fields
    )


# --- the API -----------------------------------------------------------------------------------
def test_a_stop_is_made_listed_shown_and_cancelled_with_its_events():
    bank = ach_bank()
    made = stop(bank, amount=4_500, reason="Cancelled my gym")
    assert made["stopPaymentId"].startswith("stp_")
    assert {k: made[k] for k in ("accountId", "companyId", "amount", "currency", "status")} == {
        "accountId": bank.account_id,
        "companyId": BILLER,
        "amount": 4_500,
        "currency": "USD",
        "status": "active",
    }
    assert (made["expiresAt"], made["cancelledAt"], made["reason"]) == (
        None,
        None,
        "Cancelled my gym",
    )
    path = f"/stop-payments/{made['stopPaymentId']}"
    shown = bank.api.get(path).json()
    assert {k: v for k, v in shown.items() if k != "meta"} == {
        k: v for k, v in made.items() if k != "meta"
    }

    # Trailing padding and case are the header's: the stored id is what a header would carry.
    padded = stop(bank, companyId="acme      ", expiresAt=iso(timezone.now() + timedelta(days=9)))
    assert (padded["companyId"], padded["amount"]) == ("ACME", None)

    listed = bank.api.get("/stop-payments", {"accountId": bank.account_id, "limit": 1}).json()
    assert [row["stopPaymentId"] for row in listed["data"]] == [padded["stopPaymentId"]]
    rest = bank.api.get("/stop-payments", {"limit": 1, "cursor": listed["nextCursor"]}).json()
    assert [row["stopPaymentId"] for row in rest["data"]] == [made["stopPaymentId"]]
    assert rest["hasMore"] is False

    cancelled = created(bank.api.post(f"{path}/cancellations", {"reason": "Paid up"}), "v2")
    assert (cancelled["status"], cancelled["cancellationReason"]) == ("cancelled", "Paid up")
    assert cancelled["cancelledAt"] is not None
    again = bank.api.post(f"{path}/cancellations", {})
    assert again.status_code == 409, again.content
    assert again.json()["code"] == "invalid_state_transition"

    by_status = bank.api.get("/stop-payments", {"status": "cancelled"}).json()["data"]
    assert [row["stopPaymentId"] for row in by_status] == [made["stopPaymentId"]]
    active = bank.api.get("/stop-payments", {"status": "active"}).json()["data"]
    assert [row["stopPaymentId"] for row in active] == [padded["stopPaymentId"]]

    events = Event.objects.filter(object_id=made["stopPaymentId"]).order_by("pk")
    assert [e.type for e in events] == ["stop_payment.created", "stop_payment.cancelled"]
    assert {e.actor_type for e in events} == {"apiKey"}
    assert events[0].data["company_id"] == BILLER


def test_an_expired_stop_is_shown_expired_and_cannot_be_cancelled():
    bank = ach_bank()
    made = stop(bank, expiresAt=iso(timezone.now() + timedelta(hours=1)))
    StopPayment.objects.filter(pk=made["stopPaymentId"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    path = f"/stop-payments/{made['stopPaymentId']}"
    assert bank.api.get(path).json()["status"] == "expired"
    listed = bank.api.get("/stop-payments", {"status": "expired"}).json()["data"]
    assert [row["stopPaymentId"] for row in listed] == [made["stopPaymentId"]]
    assert bank.api.get("/stop-payments", {"status": "active"}).json()["data"] == []
    refused = bank.api.post(f"{path}/cancellations", {})
    assert refused.status_code == 409, refused.content
    assert refused.json()["details"] == {"from": "expired", "to": "cancelled"}


@pytest.mark.parametrize(
    ("fields", "status", "field"),
    [
        ({"companyId": ""}, 400, "companyId"),
        ({"companyId": "          "}, 400, "companyId"),
        ({"companyId": "12345678901"}, 400, "companyId"),  # 11 characters
        ({"companyId": "ACMÉ"}, 400, "companyId"),  # not NACHA's alphanumeric set
        ({"companyId": "AC\tME"}, 400, "companyId"),
        ({"amount": 0}, 400, "amount"),
        ({"amount": -5}, 400, "amount"),
        ({"amount": 1.5}, 400, "amount"),
        ({"expiresAt": "2020-01-01T00:00:00Z"}, 400, "expiresAt"),
        ({"expiresAt": "tomorrow"}, 400, "expiresAt"),
        ({"reason": "x" * 201}, 400, "reason"),
        ({"accountId": "acc_0000000000000000000000000"}, 404, None),
    ],
)
def test_a_stop_the_bank_cannot_take_is_refused_and_changes_nothing(fields, status, field):
    bank = ach_bank()
    before = snapshot()
    body = {"accountId": bank.account_id, "companyId": BILLER, **fields}
    response = bank.api.post("/stop-payments", body)
    assert response.status_code == status, response.content
    if field is not None:
        assert field in response.json()["details"], response.content
    assert snapshot() == before


def test_a_closed_or_non_usd_account_takes_no_stop():
    bank = ach_bank(load_amount=0)
    bank.api.patch(f"/accounts/{bank.account_id}", {"status": "closed"})
    before = domain()
    closed = bank.api.post("/stop-payments", {"accountId": bank.account_id, "companyId": BILLER})
    assert closed.status_code == 422, closed.content
    assert closed.json()["code"] == "account_not_active"
    assert domain() == before

    euro = created(
        bank.api.post(
            "/products/accounts",
            {"code": "CBSFinancialContractTypeAPI", "name": "Checking (EUR)", "currency": "EUR"},
        ),
        "v2",
    )["rid"]
    account = created(
        bank.api.post("/accounts", {"customerId": bank.customer_id, "productRid": euro}), "v2"
    )["accountId"]
    before = domain()
    refused = bank.api.post("/stop-payments", {"accountId": account, "companyId": BILLER})
    assert refused.status_code == 422, refused.content
    assert refused.json()["code"] == "currency_mismatch"
    assert domain() == before


def test_another_institutions_stops_and_accounts_answer_404():
    bank, other = ach_bank(), ach_bank()
    made = stop(bank)
    path = f"/stop-payments/{made['stopPaymentId']}"
    before = snapshot()
    assert other.api.get(path).status_code == 404
    assert other.api.post(f"{path}/cancellations", {}).status_code == 404
    refused = other.api.post("/stop-payments", {"accountId": bank.account_id, "companyId": BILLER})
    assert refused.status_code == 404
    assert other.api.get("/stop-payments").json()["data"] == []
    assert snapshot() == before
    assert bank.api.get(path).json()["status"] == "active"


# --- the rail: R08 ------------------------------------------------------------------------------
def test_a_stopped_debit_is_returned_r08_in_the_next_file_and_no_money_moves(rails_dir):
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    made = stop(bank)
    send(bank, day, debit(bank, 4_000), debit(bank, 3_000, company_id="9999999999"))
    rails_at(local(day, 9))

    stopped = InboundEntry.objects.get(amount=4_000)
    assert (stopped.status, stopped.return_code, stopped.return_reason) == (
        "returning",
        "R08",
        "payment_stopped",
    )
    assert stopped.stop_payment_id == made["stopPaymentId"]
    assert InboundEntry.objects.get(amount=3_000).status == "applied"  # another originator
    assert bank.balances() == (7_000, 0, 7_000)
    assert internal(bank, "rail_settlement") == 3_000
    returning = Event.objects.get(type="inbound_entry.returning")
    assert returning.data["stop_payment_id"] == made["stopPaymentId"]
    shown = bank.api.get(f"/inbound-entries/{stopped.pk}").json()["returnInfo"]
    assert (shown["code"], shown["stopPaymentId"]) == ("R08", made["stopPaymentId"])

    rails_at(local(day, 17))  # the 16:45 file carries the return
    assert returned_in_next_file(bank) == {stopped.trace_number: "R08"}
    stopped.refresh_from_db()
    assert stopped.status == "returned"
    assert bank.balances() == (7_000, 0, 7_000)
    assert ledger_breaches() == []


def test_the_stop_comes_before_funds_and_after_the_accounts_own_refusals(rails_dir):
    short = ach_bank(load_amount=1_000)
    frozen = ach_bank(load_amount=10_000)
    day = business_day()
    for bank in (short, frozen):
        stop(bank)
    frozen.api.patch(f"/accounts/{frozen.account_id}", {"status": "frozen"})
    send(short, day, debit(short, 5_000))  # stopped and short: R08, not R01
    send(frozen, day, debit(frozen, 5_000))  # stopped and frozen: R16
    rails_at(local(day, 9))
    assert InboundEntry.objects.get(institution=short.institution).return_code == "R08"
    assert InboundEntry.objects.get(institution=frozen.institution).return_code == "R16"
    assert InboundEntry.objects.get(institution=frozen.institution).stop_payment_id is None
    assert short.balances() == (1_000, 0, 1_000)
    assert ledger_breaches() == []


def test_an_amount_limited_stop_stops_only_its_amount(rails_dir):
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    stop(bank, amount=2_500)
    send(bank, day, debit(bank, 2_500), debit(bank, 2_501))
    rails_at(local(day, 9))
    assert InboundEntry.objects.get(amount=2_500).return_code == "R08"
    assert InboundEntry.objects.get(amount=2_501).status == "applied"
    assert bank.balances() == (7_499, 0, 7_499)
    assert ledger_breaches() == []


def test_an_expired_or_cancelled_stop_stops_nothing(rails_dir):
    bank = ach_bank(load_amount=10_000)
    day = business_day()  # a week ahead: a stop for a day has expired by then
    stop(bank, expiresAt=iso(timezone.now() + timedelta(days=1)))
    cancelled = stop(bank, companyId="5555555555")
    bank.api.post(f"/stop-payments/{cancelled['stopPaymentId']}/cancellations", {})
    send(bank, day, debit(bank, 1_000), debit(bank, 2_000, company_id="5555555555"))
    rails_at(local(day, 9))
    assert set(InboundEntry.objects.values_list("status", flat=True)) == {"applied"}
    assert bank.balances() == (7_000, 0, 7_000)
    assert ledger_breaches() == []


def test_a_stop_until_a_later_day_still_stops(rails_dir):
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    stop(bank, expiresAt=iso(local(day, 12)))
    send(bank, day, debit(bank, 1_000))
    rails_at(local(day, 9))  # settled before the stop's end
    assert InboundEntry.objects.get().return_code == "R08"


def test_a_credit_and_a_prenote_are_never_stopped(rails_dir):
    bank = ach_bank(load_amount=0)
    day = business_day()
    stop(bank)
    number = number_of(bank)
    send(
        bank,
        day,
        Incoming("credit", number, 1_500, company_id=BILLER),
        Incoming("debit", number, 0, company_id=BILLER, prenote=True),
    )
    rails_at(local(day, 9))
    assert set(InboundEntry.objects.values_list("status", flat=True)) == {"applied"}
    assert bank.balances() == (1_500, 0, 1_500)
    assert ledger_breaches() == []


def test_a_stop_on_one_account_leaves_the_customers_other_accounts_alone(rails_dir):
    bank = ach_bank(load_amount=10_000)
    other = usd_account(bank.api, bank.customer_id, 10_000)
    day = business_day()
    stop(bank)
    other_number = Account.objects.get(pk=other).account_number
    send(bank, day, Incoming("debit", other_number, 1_000, company_id=BILLER))
    rails_at(local(day, 9))
    assert InboundEntry.objects.get().status == "applied"


def test_the_simulated_bank_sends_a_debit_of_the_company_a_stop_names(rails_dir):
    bank = ach_bank(load_amount=10_000)
    stop(bank)
    number = number_of(bank)
    for company in (BILLER, "4444444444"):
        call_command(
            "simulated_bank",
            "--send-debit", number, "1000",
            "--institution", bank.institution.pk,
            "--company-id", company,
        )  # fmt: skip
    with pytest.raises(CommandError, match="--company-id"):
        call_command(
            "simulated_bank",
            "--send-debit", number, "1000",
            "--institution", bank.institution.pk,
            "--company-id", "12345678901",
        )  # fmt: skip
    rails_at(timezone.now() + timedelta(days=5))  # read and settled, whatever day today is
    codes = dict(InboundEntry.objects.values_list("company_id", "return_code"))
    assert codes == {BILLER: "R08", "4444444444": ""}
    assert bank.balances() == (9_000, 0, 9_000)
    assert ledger_breaches() == []
