"""SEPA on the payment orders (issue 50, items 1 and 2; docs/payments.md, "External accounts"
and "Payment orders"): external accounts by IBAN (and BIC), sealed and shown by their last
four, checked by python-stdnum; orders over sepa_ct and sepa_inst in EUR only, to SEPA
accounts only, with their end-to-end id (unique per institution, a database rule, raced by
real threads), their remittance information or ISO 11649 creditor reference, requested
execution dates on TARGET2's calendar; made, held, approved and cancelled by the services
ACH's orders go through."""

import base64
import json
import logging
import threading
from datetime import date, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from stdnum import iban as stdnum_iban

from accounts.verification import ledger_breaches
from cards.dates import today_of
from core.actors import Actor
from core.exceptions import ValidationFailed
from core.reencryption import sensitive_data_reencrypt
from events.models import Event
from institutions.services import holiday_add
from payments.calendar import is_sepa_day, is_target2_business_day, target2_closing_days
from payments.models import ExternalAccount, InboundEntry, PaymentOrder, SepaProfile
from payments.services.orders import payment_order_approve, payment_order_cancel
from payments.services.profiles import sepa_profile_set
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.conftest import Api
from tests.payments.helpers import (
    IBAN,
    IBAN_PRINTED,
    ach_bank,
    external_body,
    inbound_credit_file,
    order_body,
    sepa_bank,
    sepa_external_body,
    sepa_order_body,
    upload_body,
)

pytestmark = pytest.mark.django_db

D = date.fromisoformat


def with_check_digits(country: str, bban: str) -> str:
    """An IBAN of `country` and `bban` whose mod 97 check digits hold."""
    return country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban


# --- external accounts ------------------------------------------------------------------------
def test_a_sepa_external_account_keeps_its_iban_sealed_and_shows_its_last_four(caplog):
    caplog.set_level(logging.DEBUG)
    bank = sepa_bank()
    body = bank.external(IBAN_PRINTED.lower(), bic="deutdeff500")

    assert (body["kind"], body["ach"], body["countryCode"], body["currency"]) == (
        "sepa",
        None,
        "276",
        "EUR",
    )
    assert body["sepa"] == {"ibanLast4": "3000", "bic": "DEUTDEFF500"}
    assert (body["status"], body["customerId"]) == ("unverified", bank.customer_id)
    row = ExternalAccount.objects.get(pk=body["externalAccountId"])
    assert IBAN not in row.sepa_iban_encrypted
    assert row.sepa_iban() == IBAN  # the electronic form, for the file
    assert (row.ach_routing_number, row.ach_account_number_encrypted) == ("", "")
    [event] = Event.objects.filter(type="external_account.created")
    assert (event.data["iban_last4"], event.data["bic"]) == ("3000", "DEUTDEFF500")

    # Without a BIC: SEPA asks for the IBAN only.
    without = sepa_external_body(None, "DE89370400440532013000")
    del without["sepa"]["bic"]
    no_bic = created(bank.api.post("/external-accounts", without), "v2")
    assert no_bic["sepa"] == {"ibanLast4": "3000", "bic": None}
    assert no_bic["customerId"] is None

    # A refused request with the IBAN in it does not repeat it.
    refused = bank.api.post("/external-accounts", sepa_external_body(None, bic="DEUTXXFF"))
    assert "sepa.bic" in assert_error(refused, "v2", 400, "validation_error", ANY)["details"]
    shown = [
        refused.content.decode(),
        bank.api.get("/external-accounts").content.decode(),
        bank.api.get(f"/external-accounts/{body['externalAccountId']}").content.decode(),
        str(list(Event.objects.values_list("data", flat=True))),
        caplog.text,
    ]
    for text in shown:
        for form in (IBAN, IBAN_PRINTED, IBAN_PRINTED.lower(), "370400440532013000"):
            assert form not in text


def _bad(iban=IBAN, **changes) -> dict:
    body = sepa_external_body(None, iban)
    for key, value in changes.items():
        if key in ("bic",):
            body["sepa"][key] = value
        else:
            body[key] = value
    return body


NOT_SEPA = "BR1800360305000010009795493C1"  # a valid IBAN of Brazil's


@pytest.mark.parametrize(
    ("body", "field", "secret"),
    [
        (_bad("DE89370400440532013001"), "sepa.iban", "DE89370400440532013001"),
        (_bad("DE88370400440532013000"), "sepa.iban", "DE88370400440532013000"),
        # mod 97 holds, but a German IBAN has 22 characters (here 21, then 23).
        (_bad(with_check_digits("DE", "3704004405320130")), "sepa.iban", "3704004405320130"),
        (_bad(with_check_digits("DE", "370400440532013000X")), "sepa.iban", "370400440532013000X"),
        # A BBAN of letters where Germany's is digits.
        (_bad(with_check_digits("DE", "37040044053201300A")), "sepa.iban", "37040044053201300A"),
        # mod 97 holds, no country has IBANs starting with XX.
        (_bad(with_check_digits("XX", "370400440532013000")), "sepa.iban", "370400440532013000"),
        (_bad(NOT_SEPA, countryCode="076"), "sepa.iban", NOT_SEPA),
        (_bad("DE89-3704-0044-0532-0130-00"), "sepa.iban", "3704-0044"),
        (_bad("D"), "sepa.iban", None),
        (_bad(countryCode="250"), "countryCode", IBAN),
        (_bad(currency="USD"), "currency", IBAN),
        (_bad(bic="DEUTXXFF"), "sepa.bic", IBAN),  # XX: not a country
        (_bad(bic="DEUTDEF"), "sepa.bic", IBAN),
        (_bad(bic="DEUTDEFF5"), "sepa.bic", IBAN),
        (_bad(bic="DEUT DEFF"), "sepa.bic", IBAN),
        (_bad(holderName="Ada Lövelace"), "holderName", IBAN),
        (_bad(holderName="A" * 71), "holderName", IBAN),
        (_bad(holderName="Ada & Co"), "holderName", IBAN),
        ({**external_body("x"), "sepa": {"iban": IBAN}}, "sepa", IBAN),
        ({**sepa_external_body(None), "sepa": None}, "sepa", None),
    ],
    ids=[
        "check digits (last digit)",
        "check digits",
        "too short for Germany",
        "too long for Germany",
        "format of Germany",
        "no such country",
        "not a SEPA country",
        "dashes",
        "not an IBAN",
        "not the IBAN's country",
        "not EUR",
        "BIC of no country",
        "BIC of 7",
        "BIC of 9",
        "BIC with a space",
        "holder name outside the SEPA set",
        "holder name over 70",
        "holder name with &",
        "both ach and sepa",
        "null",
    ],
)
def test_an_external_account_sepa_cannot_reach_is_refused_without_repeating_the_iban(
    body, field, secret
):
    bank = sepa_bank()
    if "customerId" in body:
        body["customerId"] = bank.customer_id
    response = bank.api.post("/external-accounts", body)
    error = assert_error(response, "v2", 400, "validation_error", ANY)
    assert field in error["details"], error
    if secret is not None:
        assert secret not in response.content.decode()
    assert not ExternalAccount.objects.exists()


def test_a_sepa_external_account_of_every_sepa_country_and_none_other():
    """Some valid IBANs (ISO 13616's registry's examples) of SEPA countries are taken; the
    country code must be the IBAN's."""
    bank = sepa_bank()
    for iban, country in [
        ("FR1420041010050500013M02606", "250"),
        ("NL91ABNA0417164300", "528"),
        ("GB29NWBK60161331926819", "826"),
        ("CH9300762011623852957", "756"),
        ("NO9386011117947", "578"),
        ("GI75NWBK000000007099453", "292"),
    ]:
        body = {**sepa_external_body(None, iban), "countryCode": country}
        body["sepa"].pop("bic")
        created(bank.api.post("/external-accounts", body), "v2")
    for iban in (NOT_SEPA, "SA0380000000608010167519", "US64SVBKUS6S3300958879"):
        body = {**sepa_external_body(None, iban)}
        response = bank.api.post("/external-accounts", body)
        assert_error(response, "v2", 400, "validation_error", ANY)
    assert ExternalAccount.objects.count() == 6


def test_a_sepa_external_accounts_holder_name_is_changed_under_sepas_rules():
    bank = sepa_bank()
    external = bank.external()["externalAccountId"]
    path = f"/external-accounts/{external}"
    assert_error(bank.api.patch(path, {"holderName": "Zoë"}), "v2", 400, "validation_error", ANY)
    changed = bank.api.patch(path, {"holderName": "Zoe Lovelace"})
    assert changed.status_code == 200, changed.content
    assert changed.json()["holderName"] == "Zoe Lovelace"


# --- payment orders -----------------------------------------------------------------------------
def test_a_sepa_credit_is_held_approved_and_cancelled_as_an_ach_one():
    bank = sepa_bank(load_amount=10_000, approval_above=5_000)
    external = bank.external()["externalAccountId"]

    order = bank.ordered(external, 2_500, endToEndId="INV-2026/42", remittanceInfo="Invoice 42")
    assert (order["status"], order["rail"], order["currency"]) == ("approved", "sepa_ct", "EUR")
    assert (order["endToEndId"], order["remittanceInfo"], order["creditorReference"]) == (
        "INV-2026/42",
        "Invoice 42",
        "",
    )
    assert (order["secCode"], order["description"], order["holdId"] is not None) == ("", "", True)
    assert bank.balances() == (10_000, 2_500, 7_500)
    [event] = Event.objects.filter(type="payment_order.created")
    assert event.data["rail"] == "sepa_ct"

    # Above the profile's threshold: it waits for a staff user, its money held meanwhile.
    big = bank.ordered(external, 6_000, rail="sepa_inst")
    assert (big["status"], big["rail"]) == ("needs_approval", "sepa_inst")
    assert big["endToEndId"] == big["paymentOrderId"].replace("_", "-")
    assert bank.balances() == (10_000, 8_500, 1_500)
    assert_error(bank.order(external, 2_000), "v2", 422, "insufficient_funds", ANY)
    staff = get_user_model().objects.create_user("ops", password="x" * 20)  # noqa: S106
    row = PaymentOrder.objects.get(pk=big["paymentOrderId"])
    assert payment_order_approve(order=row, actor=Actor(user=staff)).value.status == "approved"

    for each in (order, big):
        row = PaymentOrder.objects.get(pk=each["paymentOrderId"])
        assert payment_order_cancel(order=row, reason="asked").value.status == "cancelled"
    assert bank.balances() == (10_000, 0, 10_000)
    assert ledger_breaches() == []


def test_sepa_moves_eur_only_and_reaches_sepa_accounts_only():
    bank = sepa_bank()
    sepa_external = bank.external()["externalAccountId"]
    ach_external = created(
        bank.api.post("/external-accounts", external_body(bank.customer_id)), "v2"
    )["externalAccountId"]

    error = assert_error(
        bank.order(sepa_external, currency="USD"), "v2", 422, "currency_mismatch", ANY
    )
    assert (error["details"]["railCurrency"], error["details"]["currency"]) == ("EUR", "USD")
    assert_error(
        bank.order(ach_external),
        "v2",
        422,
        "rail_mismatch",
        {"rail": "sepa_ct", "externalAccountId": ach_external, "externalAccountKind": "ach"},
    )
    ach_order = {"rail": "ach", "secCode": "PPD", "description": "RENT"}
    assert_error(
        bank.order(sepa_external, currency="USD", **ach_order),
        "v2",
        422,
        "rail_mismatch",
        {"rail": "ach", "externalAccountId": sepa_external, "externalAccountKind": "sepa"},
    )
    assert_error(
        bank.api.post(f"/external-accounts/{sepa_external}/prenotes", {}),
        "v2",
        422,
        "rail_mismatch",
        ANY,
    )
    # ACH stays USD only, over its own accounts.
    ach = ach_bank()
    ach_sepa = created(ach.api.post("/external-accounts", sepa_external_body(None)), "v2")
    error = assert_error(
        ach.order(ach.external()["externalAccountId"], 100, currency="EUR"),
        "v2",
        422,
        "currency_mismatch",
        ANY,
    )
    assert error["details"]["railCurrency"] == "USD"
    assert_error(ach.order(ach_sepa["externalAccountId"], 100), "v2", 422, "rail_mismatch", ANY)
    # A SEPA order from a USD account: the account's currency is not the rail's.
    error = assert_error(
        ach.api.post(
            "/payment-orders",
            sepa_order_body(ach.account_id, ach_sepa["externalAccountId"]),
        ),
        "v2",
        422,
        "currency_mismatch",
        ANY,
    )
    assert error["details"]["accountCurrency"] == "USD"
    assert not PaymentOrder.objects.exists()


def test_without_a_sepa_profile_no_sepa_order_and_no_direct_debit_without_a_creditor():
    bank = sepa_bank(profile=False)
    external = bank.external()["externalAccountId"]
    for rail in ("sepa_ct", "sepa_inst"):
        assert_error(
            bank.order(external, rail=rail), "v2", 422, "rail_not_available", {"rail": rail}
        )
    SepaProfile.objects.create(
        institution=bank.institution,
        kind="interbank",
        bic="DEUTDEFFXXX",
        iban_country="LU",
        iban_bank_code="001",
    )
    # A direct debit: under a mandate, of an initiation profile with a creditor identifier.
    assert_error(
        bank.order(external, rail="sepa_dd", direction="debit"),
        "v2",
        400,
        "validation_error",
        {"mandateId": "A SEPA direct debit collects under a mandate: required."},
    )
    assert_error(
        bank.order(external, rail="sepa_dd", direction="debit", mandateId="mdt_unknown"),
        "v2",
        422,
        "creditor_identifier_missing",
        {"kind": "interbank"},
    )
    assert_error(
        bank.order(external, rail="sepa_dd", mandateId="mdt_unknown"),
        "v2",
        400,
        "validation_error",
        {"direction": "A SEPA direct debit collects (debit)."},
    )
    assert_error(
        bank.order(external, direction="debit"),
        "v2",
        400,
        "validation_error",
        {"direction": "A SEPA credit transfer pays (credit)."},
    )
    assert bank.ordered(external)["status"] == "approved"
    assert PaymentOrder.objects.count() == 1


def test_a_sepa_order_where_the_profile_requires_a_verified_account():
    bank = sepa_bank(require_verified=True)
    external = bank.external()["externalAccountId"]
    assert_error(
        bank.order(external),
        "v2",
        422,
        "external_account_not_verified",
        {"externalAccountId": external, "status": "unverified"},
    )


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"endToEndId": "E" * 36}, "endToEndId"),
        ({"endToEndId": ""}, "endToEndId"),
        ({"endToEndId": "INV_42"}, "endToEndId"),
        ({"endToEndId": "Rechnung-Nr-ä"}, "endToEndId"),
        ({"endToEndId": "/INV42"}, "endToEndId"),
        ({"endToEndId": "INV42/"}, "endToEndId"),
        ({"endToEndId": "INV//42"}, "endToEndId"),
        ({"endToEndId": " INV42"}, "endToEndId"),
        ({"endToEndId": "INV&42"}, "endToEndId"),
        ({"remittanceInfo": "x" * 141}, "remittanceInfo"),
        ({"remittanceInfo": "Miete für Januar"}, "remittanceInfo"),
        ({"remittanceInfo": "Rent; January"}, "remittanceInfo"),
        ({"creditorReference": "RF19539007547034"}, "creditorReference"),
        ({"creditorReference": "RF18"}, "creditorReference"),
        ({"creditorReference": "RF1853900754703412345678"}, "creditorReference"),
        ({"creditorReference": "18539007547034"}, "creditorReference"),
        (
            {"creditorReference": "RF18539007547034", "remittanceInfo": "Invoice 42"},
            "creditorReference",
        ),
        ({"secCode": "PPD"}, "secCode"),
        ({"description": "RENT"}, "description"),
        ({"requestedExecutionDate": "2020-01-01"}, "requestedExecutionDate"),
    ],
    ids=[
        "e2e over 35",
        "e2e empty",
        "e2e underscore",
        "e2e accent",
        "e2e leading slash",
        "e2e trailing slash",
        "e2e double slash",
        "e2e leading space",
        "e2e ampersand",
        "remittance over 140",
        "remittance accent",
        "remittance semicolon",
        "RF check digits",
        "RF too short",
        "RF too long",
        "RF without RF",
        "both remittances",
        "SEC code",
        "description",
        "past date",
    ],
)
def test_a_sepa_orders_fields_are_checked_and_a_refusal_changes_nothing(fields, field):
    bank = sepa_bank(load_amount=10_000)
    external = bank.external()["externalAccountId"]
    error = assert_error(bank.order(external, **fields), "v2", 400, "validation_error", ANY)
    assert field in error["details"], error
    assert not PaymentOrder.objects.exists()
    assert bank.balances() == (10_000, 0, 10_000)


def test_an_ach_order_takes_no_sepa_field():
    bank = ach_bank()
    external = bank.external()["externalAccountId"]
    for fields in ({"endToEndId": "E2E-1"}, {"creditorReference": "RF18539007547034"}):
        error = assert_error(
            bank.order(external, 100, **fields), "v2", 400, "validation_error", ANY
        )
        assert set(error["details"]) == set(fields)
    error = assert_error(
        bank.order(external, 100, remittanceInfo="x" * 81), "v2", 400, "validation_error", ANY
    )
    assert "remittanceInfo" in error["details"]
    body = order_body(bank.account_id, external, 100)
    del body["secCode"]
    error = assert_error(bank.api.post("/payment-orders", body), "v2", 400, "validation_error", ANY)
    assert set(error["details"]) == {"secCode"}
    assert not PaymentOrder.objects.exists()


def test_a_creditor_reference_is_kept_in_its_electronic_form():
    bank = sepa_bank()
    external = bank.external()["externalAccountId"]
    order = bank.ordered(external, creditorReference="rf18 5390 0754 7034")
    assert (order["creditorReference"], order["remittanceInfo"]) == ("RF18539007547034", "")


def test_an_end_to_end_id_names_one_order_of_the_institution():
    bank, other = sepa_bank(), sepa_bank()
    external = bank.external()["externalAccountId"]
    first = bank.ordered(external, endToEndId="SALARY 2026-11 (7)")
    assert first["endToEndId"] == "SALARY 2026-11 (7)"
    assert_error(
        bank.order(external, endToEndId="SALARY 2026-11 (7)"),
        "v2",
        422,
        "duplicate_reference",
        {"endToEndId": "SALARY 2026-11 (7)"},
    )
    # Cancelled, its id stays taken: the payee may have seen it.
    payment_order_cancel(order=PaymentOrder.objects.get(pk=first["paymentOrderId"]))
    assert_error(
        bank.order(external, endToEndId="SALARY 2026-11 (7)"), "v2", 422, "duplicate_reference", ANY
    )
    # Another institution has its own.
    elsewhere = other.ordered(
        other.external()["externalAccountId"], endToEndId="SALARY 2026-11 (7)"
    )
    assert elsewhere["endToEndId"] == "SALARY 2026-11 (7)"
    assert PaymentOrder.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_orders_at_once_with_one_end_to_end_id_make_one_order():
    bank = sepa_bank(load_amount=10_000)
    external = bank.external()["externalAccountId"]
    threads = 4
    barrier = threading.Barrier(threads)
    responses: list = [None] * threads
    errors: list = []

    def run(index):
        try:
            client = Api("v2", bank.api.key)
            barrier.wait(timeout=10)
            responses[index] = client.post(
                "/payment-orders",
                sepa_order_body(bank.account_id, external, 1_000, endToEndId="RACE-1"),
            )
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(worker.is_alive() for worker in workers), "a thread is stuck"
    if errors:
        raise errors[0]
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] + [422] * (threads - 1), [r.content for r in responses]
    for response in responses:
        if response.status_code == 422:
            assert response.json()["code"] == "duplicate_reference"
    assert PaymentOrder.objects.filter(end_to_end_id="RACE-1").count() == 1
    assert bank.balances() == (10_000, 1_000, 9_000)  # one hold, the winner's
    assert ledger_breaches() == []


def test_another_institutions_external_account_and_order_answer_not_found():
    bank, other = sepa_bank(), sepa_bank()
    external = bank.external()["externalAccountId"]
    order = bank.ordered(external)["paymentOrderId"]
    for path in (f"/external-accounts/{external}", f"/payment-orders/{order}"):
        assert_error(other.api.get(path), "v2", 404, "not_found", ANY)
    assert_error(other.order(external), "v2", 404, "not_found", ANY)
    assert_error(
        other.api.patch(f"/external-accounts/{external}", {"holderName": "Eve"}),
        "v2",
        404,
        "not_found",
        ANY,
    )
    assert_error(
        other.api.post(f"/payment-orders/{order}/cancellations", {}), "v2", 404, "not_found", ANY
    )
    assert PaymentOrder.objects.count() == 1


# --- TARGET2's calendar -------------------------------------------------------------------------
def _next_closing(today: date, month_day: tuple[int, int] | None, name: str = "") -> date:
    for year in (today.year, today.year + 1):
        for day, names in sorted(target2_closing_days(year).items()):
            if day > today and day.isoweekday() < 6:
                if (month_day and (day.month, day.day) == month_day) or (name and name in names):
                    return day
    raise AssertionError("none within two years")


def test_a_credit_transfer_on_a_closing_day_moves_to_the_next_sepa_day():
    bank = sepa_bank()
    external = bank.external()["externalAccountId"]
    today = today_of(bank.institution)
    good_friday = _next_closing(today, None, "Good Friday")
    order = bank.ordered(external, requestedExecutionDate=good_friday.isoformat())
    # Easter Monday is closed too: the Tuesday.
    assert order["requestedExecutionDate"] == (good_friday + timedelta(days=4)).isoformat()

    saturday = today + timedelta(days=(6 - today.isoweekday()) % 7 or 7)
    order = bank.ordered(external, requestedExecutionDate=saturday.isoformat())
    monday = saturday + timedelta(days=2)
    expected = monday
    while not is_sepa_day(bank.institution, expected):
        expected += timedelta(days=1)
    assert order["requestedExecutionDate"] == expected.isoformat()

    # SEPA Instant runs every day: its date stays.
    instant = bank.ordered(external, rail="sepa_inst", requestedExecutionDate=saturday.isoformat())
    assert instant["requestedExecutionDate"] == saturday.isoformat()

    # A day TARGET2 is open but the institution is not is no SEPA day either.
    open_day = today + timedelta(days=30)
    while not is_target2_business_day(open_day) or not is_target2_business_day(
        open_day + timedelta(days=1)
    ):
        open_day += timedelta(days=1)
    holiday_add(institution=bank.institution, date=open_day, name="Founding day")
    order = bank.ordered(external, requestedExecutionDate=open_day.isoformat())
    assert order["requestedExecutionDate"] == (open_day + timedelta(days=1)).isoformat()


# --- the SEPA profile ---------------------------------------------------------------------------
def test_the_sepa_profile_is_checked_whole_before_it_is_stored(capsys):
    bank = sepa_bank(profile=False)
    institution = bank.institution
    with pytest.raises(ValidationFailed) as refused, transaction.atomic():
        sepa_profile_set(
            institution=institution,
            kind="initiation",
            bic="DEUTXXFF",
            settlement_iban="DE89370400440532013001",
            creditor_identifier="DE98ZZZ09999999998",
            credit_transfer_cutoff="25:00",
            pre_notification_days=0,
            debit_hold_days=61,
        )
    assert set(refused.value.details) == {
        "bic",
        "settlement_iban",
        "creditor_identifier",
        "credit_transfer_cutoff",
        "pre_notification_days",
        "debit_hold_days",
    }
    assert "DE89370400440532013001" not in str(refused.value.details)
    with pytest.raises(ValidationFailed) as refused, transaction.atomic():
        sepa_profile_set(institution=institution, kind="initiation", bic="COBADEFFXXX")
    assert set(refused.value.details) == {"settlement_iban"}
    assert not SepaProfile.objects.exists()

    call_command(
        "sepa_profile",
        "--institution", institution.pk,
        "--kind", "initiation",
        "--bic", "cobadeffxxx",
        "--settlement-iban", "DE89 3704 0044 0532 0130 00",
        "--creditor-identifier", "DE98ZZZ09999999999",
        "--pre-notification-days", "2",
        "--debit-hold-days", "3",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert IBAN not in printed
    assert json.loads(printed)["settlement_iban"] == "••••3000"
    assert json.loads(printed)["pre_notification_days"] == 2
    profile = SepaProfile.objects.get()
    assert (
        profile.bic,
        profile.settlement_iban,
        profile.credit_transfer_cutoff,
        profile.pre_notification_days,
        profile.debit_hold_days,
    ) == ("COBADEFFXXX", IBAN, "15:00", 2, 3)
    external = bank.external()["externalAccountId"]
    assert bank.ordered(external)["status"] == "approved"


def test_the_back_office_shows_an_iban_by_its_last_four(admin_client):
    bank = sepa_bank(creditor_identifier="DE98ZZZ09999999999")
    external = bank.external()["externalAccountId"]
    order = bank.ordered(external, endToEndId="E2E-ADMIN")["paymentOrderId"]
    mandate = {
        "externalAccountId": external,
        "mandateReference": "MANDATE-ADMIN",
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
    }
    mandate = bank.api.post("/mandates", mandate).json()["mandateId"]
    pages = [
        reverse("admin:payments_externalaccount_changelist"),
        reverse("admin:payments_externalaccount_change", args=[external]),
        reverse("admin:payments_paymentorder_change", args=[order]),
        reverse("admin:payments_mandate_changelist"),
        reverse("admin:payments_mandate_change", args=[mandate]),
        reverse("admin:payments_sepaprofile_change", args=[bank.institution.pk]),
    ]
    for page in pages:
        response = admin_client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        assert IBAN not in html and "370400440532013000" not in html, page
    html = admin_client.get(pages[1]).content.decode()
    assert "•••• 3000" in html and "DEUTDEFF" in html
    assert "E2E-ADMIN" in admin_client.get(pages[2]).content.decode()
    html = admin_client.get(pages[4]).content.decode()
    assert "MANDATE-ADMIN" in html and "•••• 3000" in html
    # The settlement IBAN (BE71 0961 2345 6769), by its last four.
    html = admin_client.get(pages[5]).content.decode()
    assert "BE71096123456769" not in html and "•••• 6769" in html and "COBADEFFXXX" in html


OLD_KEY = "old:" + base64.b64encode(b"o" * 32).decode()
NEW_KEY = "new:" + base64.b64encode(b"n" * 32).decode()


def test_account_numbers_and_ibans_move_to_the_newest_key(rails_dir):
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD_KEY):
        bank = ach_bank()
        ach = bank.external("000123456789")["externalAccountId"]
        sepa = created(bank.api.post("/external-accounts", sepa_external_body(None)), "v2")
        content = inbound_credit_file(bank.profile, "55556666", 700, timezone.now().date())
        created(bank.api.post("/rail-files", upload_body(content)), "v2")
    [inbound] = InboundEntry.objects.all()
    rows = ExternalAccount.objects.filter(pk__in=[ach, sepa["externalAccountId"]])
    assert {row.ach_account_number_encrypted[:4] for row in rows} == {"old:", ""}
    assert {row.sepa_iban_encrypted[:4] for row in rows} == {"old:", ""}

    with override_settings(FIELD_ENCRYPTION_KEYS=f"{NEW_KEY},{OLD_KEY}"):
        report = sensitive_data_reencrypt()
        again = sensitive_data_reencrypt()
    assert (report.counts["external_accounts"], report.counts["inbound_entries"]) == (2, 1)
    assert (again.counts["external_accounts"], again.counts["inbound_entries"]) == (0, 0)
    with override_settings(FIELD_ENCRYPTION_KEYS=NEW_KEY):  # the old key can go
        by_kind = {row.kind: row for row in ExternalAccount.objects.all()}
        assert by_kind["ach"].ach_account_number() == "000123456789"
        assert by_kind["sepa"].sepa_iban() == IBAN
        assert by_kind["ach"].sepa_iban_encrypted == by_kind["sepa"].ach_account_number_encrypted
        inbound.refresh_from_db()
        assert inbound.account_number() == "55556666"
