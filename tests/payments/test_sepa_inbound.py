"""Inbound SEPA (issue 50 items 4 and 5, the inbound half; docs/payments.md, "Inbound SEPA"): the
IBANs of the institution's own accounts under its SEPA profile's bank code, a credit the
partner bank books to one of them (camt.054) applied once or held in suspense with the reason
its return would carry, and an instant credit the clearing offers (pacs.008) accepted at once
or rejected with its reason, nothing moved."""

from datetime import date
from unittest import mock

import pytest
import xmlschema
from django.core.management import call_command
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext
from stdnum import iban as stdnum_iban

from accounts.models import Account
from accounts.services import account_set_status
from accounts.verification import ledger_breaches
from cards.dates import today_of
from core.exceptions import ValidationFailed
from events.models import Event
from payments import account_ibans, connector
from payments.iso20022.messages import PACS_002
from payments.models import InboundEntry, Rail, RailFile, RailNotice
from payments.services.inbound import inbound_entry_apply, inbound_entry_return
from payments.services.inbound_files import FileRefused, rail_file_receive
from payments.services.instant_credits import instant_credit_answer
from payments.services.profiles import sepa_profile_set
from payments.services.settlement import rail_account
from sandbox.simulated_bank import IncomingSepa, simulated_sepa_bank_send
from sandbox.simulated_clearing import offer_credit
from tests.payments.helpers import eur_account, offered_pacs008, sepa_bank

pytestmark = pytest.mark.django_db

Status = InboundEntry.Status
Code = Account.InternalCode


def issuing_bank(code: str = "999"):
    """An institution whose accounts have IBANs LUkk 999 0 <account number>, with a funded EUR
    account, a closed one and a frozen one."""
    bank = sepa_bank(load_amount=0, iban_country="LU", iban_bank_code=code)
    closed = Account.objects.get(pk=eur_account(bank.api, bank.customer_id, 0))
    frozen = Account.objects.get(pk=eur_account(bank.api, bank.customer_id, 0))
    account_set_status(account=closed, status=Account.Status.CLOSED)
    account_set_status(account=frozen, status=Account.Status.FROZEN)
    return bank, closed, frozen


def iban_of(bank, account_id: str) -> str:
    return bank.api.get(f"/accounts/{account_id}").json()["iban"]


def posted(account_id: str) -> int:
    return Account.objects.get(pk=account_id).posted


def rail(bank, code: str) -> int:
    return rail_account(bank.institution, code, "EUR").posted


def profile_refused(bank, **values) -> dict:
    with pytest.raises(ValidationFailed) as refused, transaction.atomic():
        sepa_profile_set(institution=bank.institution, **values)
    return refused.value.details


def test_an_account_iban_is_its_number_under_the_profiles_bank_code():
    bank, closed, _ = issuing_bank()
    account = Account.objects.get(pk=bank.account_id)
    iban = iban_of(bank, bank.account_id)
    # LU, its ISO 13616 check digits, the bank code, the 12-digit number in the 13-wide field.
    assert iban == "LU" + iban[2:4] + "999" + "0" + account.account_number
    assert stdnum_iban.validate(iban) == iban
    assert int("".join(str(int(c, 36)) for c in iban[4:] + iban[:4])) % 97 == 1
    assert iban_of(bank, closed.pk) is not None  # closed still has its IBAN (answered AC04)
    # The account's own query joins its institution's profile (accounts.ibans.related): the
    # read asks for the profile in no query of its own.
    with CaptureQueriesContext(connection) as queries:
        assert iban_of(bank, bank.account_id) == iban
    assert not [q for q in queries if q["sql"].startswith('SELECT "payments_sepaprofile"')]
    # Back from the IBAN: its profile by the bank code, its account by the number.
    assert account_ibans.profile_of_iban(iban).institution_id == bank.institution.pk
    assert account_ibans.account_of_iban(bank.profile, iban) == account
    # Another institution, another code: its IBANs are not this one's accounts.
    other, _, _ = issuing_bank("998")
    theirs = iban_of(other, other.account_id)
    assert account_ibans.account_of_iban(bank.profile, theirs) is None
    assert account_ibans.profile_of_iban(theirs).institution_id == other.institution.pk
    # The profile's bank code: a country whose IBANs carry the number, the country's format,
    # no other institution's, and set once.
    fresh = sepa_bank(load_amount=0)
    for values, field in (
        ({"iban_country": "DE", "iban_bank_code": "37040044"}, "iban_country"),
        ({"iban_country": "LU", "iban_bank_code": "99"}, "iban_bank_code"),
        ({"iban_country": "LU", "iban_bank_code": "998"}, "iban_bank_code"),
        ({"iban_country": "LU"}, "iban_bank_code"),
    ):
        assert set(profile_refused(fresh, **values)) == {field}, values
    assert "Set once" in profile_refused(bank, iban_bank_code="997")["iban_bank_code"]
    sepa_profile_set(institution=fresh.institution, iban_country="lu", iban_bank_code="997")
    fresh.profile.refresh_from_db()
    assert (fresh.profile.iban_country, fresh.profile.iban_bank_code) == ("LU", "997")
    assert iban_of(fresh, fresh.account_id).startswith("LU")
    # A profile without a bank code: no IBAN.
    plain = sepa_bank(load_amount=0)
    with CaptureQueriesContext(connection) as queries:
        assert iban_of(plain, plain.account_id) is None
    assert not [q for q in queries if q["sql"].startswith('SELECT "payments_sepaprofile"')]


def test_a_booked_credit_is_applied_once_and_the_others_wait_in_suspense():
    bank, closed, frozen = issuing_bank()
    other, _, _ = issuing_bank("998")
    mine = iban_of(bank, bank.account_id)
    unknown = account_ibans._iban("LU", "999", "000000000000")
    credits = [
        IncomingSepa(mine, 1_500),
        IncomingSepa(unknown, 200),
        IncomingSepa(iban_of(bank, closed.pk), 300),
        IncomingSepa(iban_of(bank, frozen.pk), 400),
        IncomingSepa(iban_of(other, other.account_id), 500),
    ]
    name = simulated_sepa_bank_send(
        institution=bank.institution, credits=credits, today=today_of(bank.institution)
    )
    content = (connector.folder(bank.institution.pk, "sepa", "inbox") / name).read_bytes()
    first = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_CT, name=name, content=content
    )
    assert first.status == RailFile.Status.APPLIED, first.error
    entries = {e.amount: e for e in InboundEntry.objects.filter(institution=bank.institution)}
    assert {amount: (e.status, e.return_code) for amount, e in entries.items()} == {
        1_500: (Status.APPLIED, ""),
        200: (Status.SUSPENSE, "AC01"),
        300: (Status.SUSPENSE, "AC04"),
        400: (Status.SUSPENSE, "AC06"),
        500: (Status.SUSPENSE, "AC01"),  # another institution's IBAN is none of this one's
    }
    applied = entries[1_500]
    assert (applied.rail, applied.currency, applied.account_id) == (
        "sepa_ct",
        "EUR",
        bank.account_id,
    )
    assert (
        applied.account_number_last4 == mine[-4:] and mine not in applied.account_number_encrypted
    )
    assert applied.company_name == "ACME GMBH" and applied.remittance_info == "Invoice 2026-11"
    assert posted(bank.account_id) == 1_500
    assert rail(bank, Code.RAIL_SUSPENSE) == 1_400
    assert rail(bank, Code.RAIL_SETTLEMENT) == -2_900
    # The same file again, and the same bookings in another file: nothing moves twice.
    again = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_CT, name=name, content=content
    )
    assert again.pk == first.pk
    retold = content.replace(b"<MsgId>SIMBANK-CRD-", b"<MsgId>SIMBANK-CRX-")
    second = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_CT, name="again.xml", content=retold
    )
    assert second.pk != first.pk and second.status == RailFile.Status.APPLIED
    assert InboundEntry.objects.filter(institution=bank.institution).count() == 5
    assert posted(bank.account_id) == 1_500
    # Not in EUR: refused whole, the IBAN not repeated.
    with pytest.raises(FileRefused) as refused:
        rail_file_receive(
            institution=bank.institution,
            rail=Rail.SEPA_CT,
            name="usd.xml",
            content=retold.replace(b'Ccy="EUR"', b'Ccy="USD"').replace(b"CRX", b"CRY"),
            keep_refused=False,
        )
    assert "EUR" in refused.value.reason and mine not in refused.value.reason
    # Events with their actor, never the IBAN; the API shows the entry as ACH's are.
    events = Event.objects.filter(object_id=applied.pk).order_by("pk")
    assert [e.type for e in events] == ["inbound_entry.received", "inbound_entry.applied"]
    assert {e.actor_type for e in events} == {"system"}
    assert events[1].data["rail"] == "sepa_ct" and mine not in str(events[1].data)
    shown = bank.api.get(f"/inbound-entries/{entries[300].pk}").json()
    assert (shown["status"], shown["returnInfo"]["code"], shown["rail"]) == (
        "suspense",
        "AC04",
        "sepa_ct",
    )
    assert shown["endToEndId"] == "SIMBANK-E2E-00000003" and shown["accountNumberLast4"]
    assert other.api.get(f"/inbound-entries/{applied.pk}").status_code == 404
    # Staff place a credit in suspense (four eyes upstream); its return is not built.
    inbound_entry_apply(inbound=entries[200], account=Account.objects.get(pk=bank.account_id))
    assert posted(bank.account_id) == 1_700
    with pytest.raises(ValidationFailed):
        inbound_entry_return(inbound=entries[400])
    # A profile that issues no IBANs: a credit for another account is only recorded, as before.
    plain = sepa_bank(load_amount=0)
    plain_name = simulated_sepa_bank_send(
        institution=plain.institution, credits=[IncomingSepa(mine, 100)], today=date(2026, 11, 27)
    )
    rail_file_receive(
        institution=plain.institution,
        rail=Rail.SEPA_CT,
        name=plain_name,
        content=(connector.folder(plain.institution.pk, "sepa", "inbox") / plain_name).read_bytes(),
    )
    assert not InboundEntry.objects.filter(institution=plain.institution).exists()
    assert RailNotice.objects.get(institution=plain.institution).reason == "unknown_credit"
    # The sandbox's command books one the same way, into the inbox.
    call_command(
        "simulated_bank", "--institution", bank.institution.pk, "--send-sepa-credit", mine, "100"
    )
    inbox = connector.folder(bank.institution.pk, "sepa", "inbox")
    (sent,) = [path for path in inbox.iterdir() if path.name != name]
    rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_CT, name=sent.name, content=sent.read_bytes()
    )
    assert posted(bank.account_id) == 1_800
    assert ledger_breaches() == []


def test_instant_credits_are_accepted_once_or_rejected_with_their_reason(capsys):
    bank, closed, frozen = issuing_bank()
    other, _, _ = issuing_bank("998")
    mine, theirs = iban_of(bank, bank.account_id), iban_of(other, other.account_id)
    accepted = offer_credit(iban=mine, amount=2_500, transaction_id="TX-1")
    assert (accepted.status, accepted.reason) == ("ACCP", None)
    assert accepted.seconds < 10
    assert posted(bank.account_id) == 2_500
    # The same credit offered again: the same answer, nothing moved twice.
    assert offer_credit(iban=mine, amount=2_500, transaction_id="TX-1").status == "ACCP"
    assert posted(bank.account_id) == 2_500
    unknown = account_ibans._iban("LU", "999", "000000000000")
    for iban, code in (
        (unknown, "AC01"),
        (iban_of(bank, closed.pk), "AC04"),
        (iban_of(bank, frozen.pk), "AC06"),
    ):
        offered = offer_credit(iban=iban, amount=700, transaction_id=f"TX-{code}")
        assert (offered.status, offered.reason) == ("RJCT", code)
    # Another institution's IBAN offered to this one: unknown here; routed by its bank code,
    # accepted there.
    misrouted = offer_credit(
        iban=theirs, amount=900, transaction_id="TX-2", institution=bank.institution
    )
    assert (misrouted.status, misrouted.reason) == ("RJCT", "AC01")
    assert offer_credit(iban=theirs, amount=900, transaction_id="TX-2").status == "ACCP"
    assert posted(other.account_id) == 900
    # The account's row held by another transaction past the wait allowed, or the ledger
    # refusing the posting: MS03, in time.
    with mock.patch(
        "payments.services.sepa_inbound.lock_accounts",
        side_effect=[OperationalError("lock"), ValidationFailed("balance_out_of_range")],
    ):
        for transaction_id in ("TX-4", "TX-5"):
            held = offer_credit(iban=mine, amount=300, transaction_id=transaction_id)
            assert (held.status, held.reason) == ("RJCT", "MS03")
    # Not SEPA Instant: MS03. A document that is not valid: no answer, kept refused.
    answer = instant_credit_answer(
        institution=bank.institution, content=offered_pacs008(mine, "TX-3", instant=False)
    )
    assert b"<TxSts>RJCT</TxSts>" in answer and b"<Cd>MS03</Cd>" in answer
    assert xmlschema.XMLSchema(str(PACS_002.xsd)).is_valid(answer)
    assert instant_credit_answer(institution=bank.institution, content=b"<Document/>") is None
    assert RailFile.objects.filter(
        institution=bank.institution, status=RailFile.Status.REFUSED
    ).exists()
    # Nothing booked on a reject: the account and the rail's accounts moved by the accepted one.
    assert posted(bank.account_id) == 2_500 and rail(bank, Code.RAIL_SUSPENSE) == 0
    assert rail(bank, Code.RAIL_SETTLEMENT) == -2_500
    entries = InboundEntry.objects.filter(institution=bank.institution, rail=Rail.SEPA_INST)
    assert sorted(entries.values_list("status", "return_code")) == [
        ("applied", ""),
        ("rejected", "AC01"),
        ("rejected", "AC01"),
        ("rejected", "AC04"),
        ("rejected", "AC06"),
        ("rejected", "MS03"),
        ("rejected", "MS03"),
        ("rejected", "MS03"),
    ]
    rejected = entries.get(return_code="AC04")
    assert list(
        Event.objects.filter(object_id=rejected.pk).order_by("pk").values_list("type", flat=True)
    ) == ["inbound_entry.received", "inbound_entry.rejected"]
    # The sandbox's command offers one the same way.
    call_command("simulated_bank", "--send-instant-credit", mine, "100")
    assert capsys.readouterr().out.startswith("ACCP in ")
    assert posted(bank.account_id) == 2_600
    assert ledger_breaches() == []

    # The partner bank books each credit the clearing settled on the settlement account, once
    # (a camt.054 in the inbox naming its transaction id and the debtor's bank): the money TX
    # applied when it accepted it, not a new credit.
    inbox = connector.folder(bank.institution.pk, "sepa", "inbox")
    bookings = sorted(inbox.iterdir())
    assert len(bookings) == 2  # TX-1, offered twice, and the command's
    for path in bookings:
        received = rail_file_receive(
            institution=bank.institution,
            rail=Rail.SEPA_CT,
            name=path.name,
            content=path.read_bytes(),
        )
        assert received.status == RailFile.Status.APPLIED, received.error
    booked = InboundEntry.objects.filter(institution=bank.institution, rail=Rail.SEPA_CT)
    assert not booked.exists() and posted(bank.account_id) == 2_600
    # A booking of TX-1 at another sum is not that credit, nor a new one: for reconciliation.
    # A booking of a credit TX rejected is money at the bank all the same: booked as any
    # credit (to suspense, its account closed).
    today = today_of(bank.institution)
    name = simulated_sepa_bank_send(
        institution=bank.institution,
        credits=[
            IncomingSepa(mine, 2_400, transaction_id="TX-9", debtor_bic="DEUTDEFFXXX"),
            IncomingSepa(iban_of(bank, closed.pk), 700, transaction_id="TX-AC04"),
        ],
        today=today,
    )
    content = (inbox / name).read_bytes().replace(b"TX-9", b"TX-1")
    received = rail_file_receive(
        institution=bank.institution, rail=Rail.SEPA_CT, name=name, content=content
    )
    assert received.status == RailFile.Status.APPLIED, received.error
    assert list(received.notices.values_list("reason", flat=True)) == ["instant_credit_unclear"]
    assert list(booked.values_list("amount", "status", "return_code")) == [
        (700, Status.SUSPENSE, "AC04")
    ]
    assert posted(bank.account_id) == 2_600
    assert ledger_breaches() == []
