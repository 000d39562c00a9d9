"""Card products and issuance (`card_products_seed`, `card_issue`): what a new card holds, what
the database holds of it, and every refusal (which changes nothing)."""

import calendar
import hashlib
import hmac
from datetime import date

import pytest
from cryptography.exceptions import InvalidTag
from django.conf import settings
from django.db import connection, transaction
from stdnum import luhn

from accounts.models import Account, AccountProduct
from accounts.services import account_create, account_set_status
from cards.dates import today_of
from cards.models import Card, CardProduct
from cards.services import card_products_seed, card_set_status
from cards.services.issuance import embossed_name_of
from core.exceptions import AccountNotActive, CardNotActive, ValidationFailed
from events.models import Event

from .helpers import (
    ADDRESS,
    DEBIT,
    PREPAID,
    PREPAID_VIRTUAL,
    card_events,
    card_product,
    fresh_card,
    issue_card,
    make_account,
    make_customer,
    make_institution,
    refused,
)

pytestmark = pytest.mark.django_db

PHYSICAL, VIRTUAL = CardProduct.Form.PHYSICAL, CardProduct.Form.VIRTUAL


@pytest.fixture
def fi():
    return make_institution()


# --- Products -----------------------------------------------------------------------------------


def test_every_institution_gets_the_three_standard_card_products(fi):
    other = make_institution()
    products = {
        p.code: (p.kind, sorted(p.forms), p.bin, p.pan_length, p.validity_years)
        for p in CardProduct.objects.filter(institution=fi)
    }
    assert products == {
        DEBIT: ("debit", ["physical", "virtual"], "400001", 16, 4),
        PREPAID: ("prepaid", ["physical", "virtual"], "400002", 16, 3),
        PREPAID_VIRTUAL: ("prepaid", ["virtual"], "40000300", 16, 2),
    }
    assert CardProduct.objects.filter(institution=other).count() == 3
    assert card_product(fi, DEBIT).account_kind == "current"
    assert card_product(fi, PREPAID).account_kind == "prepaid"


def test_seeding_again_keeps_the_products_as_they_are(fi):
    product = card_product(fi, PREPAID)
    CardProduct.objects.filter(pk=product.pk).update(bin="499999")
    seeded = card_products_seed(institution=fi)
    assert [p.code for p in seeded] == [DEBIT, PREPAID, PREPAID_VIRTUAL]
    assert CardProduct.objects.filter(institution=fi).count() == 3
    assert card_product(fi, PREPAID).bin == "499999"
    assert card_product(fi, PREPAID).pk == product.pk


# --- What a new card holds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "code", "form"),
    [
        ("current", DEBIT, PHYSICAL),
        ("current", DEBIT, VIRTUAL),
        ("prepaid", PREPAID, PHYSICAL),
        ("prepaid", PREPAID, VIRTUAL),
        ("prepaid", PREPAID_VIRTUAL, VIRTUAL),
    ],
)
def test_a_new_card_has_a_luhn_valid_pan_of_its_product_a_cvv_and_an_expiry(fi, kind, code, form):
    account = make_account(fi, kind=kind)
    product = card_product(fi, code)
    card = issue_card(account, code=code, form=form)

    card = fresh_card(card)
    pan, cvv = card.pan(), card.cvv()
    assert pan.startswith(product.bin)
    assert len(pan) == product.pan_length == card.pan_length
    assert pan.isdigit() and luhn.is_valid(pan)
    assert card.masked_pan == pan[:6] + "*" * (len(pan) - 10) + pan[-4:]
    assert (card.pan_first6, card.pan_last4) == (pan[:6], pan[-4:])
    assert len(cvv) == 3 and cvv.isdigit()

    today = today_of(fi)
    year, month = today.year + product.validity_years, today.month
    assert (card.expiry_year, card.expiry_month) == (year, month)
    assert card.expires_on == date(year, month, calendar.monthrange(year, month)[1])

    assert (card.status, card.form, card.product_id) == ("inactive", form, product.pk)
    assert (card.account_id, card.customer_id) == (account.pk, account.customer_id)
    assert card.primary_card_id is None and card.predecessor_id is None
    assert card.lineage_id is None and card.lineage_root_id == card.pk
    assert card.delivery_address == (ADDRESS if form == PHYSICAL else None)
    assert (card.pin_hash, card.pin_failed_attempts, card.pin_blocked) == (None, 0, False)
    assert (card.risk_level, card.ecommerce, card.magstripe) == ("low", True, False)


def test_new_cards_get_different_pans_and_fingerprints(fi):
    account = make_account(fi)
    cards = [issue_card(account) for _ in range(5)]
    assert len({card.pan() for card in cards}) == 5
    assert len({card.pan_fingerprint for card in cards}) == 5


def test_a_card_may_be_issued_active(fi):
    card = issue_card(make_account(fi), status=Card.Status.ACTIVE)
    assert fresh_card(card).status == "active"
    with pytest.raises(ValueError, match="inactive or active"):
        issue_card(make_account(fi), status=Card.Status.SUSPENDED)


def test_limits_default_from_the_product(fi):
    for kind, code in (("current", DEBIT), ("prepaid", PREPAID), ("prepaid", PREPAID_VIRTUAL)):
        product = card_product(fi, code)
        card = fresh_card(issue_card(make_account(fi, kind=kind), code=code))
        assert (
            card.limit_per_transaction,
            card.limit_daily,
            card.limit_monthly,
            card.limit_daily_cash,
        ) == (
            product.default_per_transaction,
            product.default_daily,
            product.default_monthly,
            product.default_daily_cash,
        )
    assert card.limit_daily_cash == 0  # PREPAID_VIRTUAL: no cash


def test_issuing_emits_card_issued_in_the_same_transaction(fi):
    account = make_account(fi)
    card = issue_card(account, form=PHYSICAL)
    assert card_events(card) == [
        (
            "card.issued",
            {
                "accountId": account.pk,
                "customerId": account.customer_id,
                "cardProductRid": card.product_id,
                "form": "physical",
                "status": "inactive",
                "last4": card.pan_last4,
            },
        )
    ]
    assert Event.objects.get(object_id=card.pk).institution_id == fi.pk

    class Boom(Exception):
        pass

    cards, events = Card.objects.count(), Event.objects.count()
    with pytest.raises(Boom), transaction.atomic():
        issue_card(account)
        raise Boom
    assert (Card.objects.count(), Event.objects.count()) == (cards, events)


# --- Embossed name ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "last", "embossed"),
    [
        ("Zoë", "Müller", "ZOE MULLER"),
        ("Ada", "Lovelace", "ADA LOVELACE"),
        ("François-René", "de Chateaubriand", "FRANCOIS-RENE DE CHATEAUBR"),
        ("Séverine", "O'Brien", "SEVERINE O'BRIEN"),
        ("Johann", "Strauß", "JOHANN STRAUSS"),
        ("Łukasz", "Ørsted-Þórðarson", "LUKASZ ORSTED-THORDARSON"),
        ("Ægir", "Œlberg", "AEGIR OELBERG"),
        ("李", "小龙", "CARDHOLDER"),
    ],
)
def test_the_embossed_name_defaults_to_the_customers_name_in_ascii_capitals(
    fi, first, last, embossed
):
    customer = make_customer(fi, first, last)
    card = issue_card(make_account(fi, customer))
    assert fresh_card(card).embossed_name == embossed
    assert len(embossed) <= 26
    assert embossed_name_of(customer) == embossed


def test_a_long_name_is_cut_to_26_characters_without_a_trailing_space(fi):
    customer = make_customer(fi, "Maximiliane Alexandrina", "von Hohenzollern")
    # "MAXIMILIANE ALEXANDRINA VO" is 26 characters; a cut on a space is stripped.
    assert embossed_name_of(customer) == "MAXIMILIANE ALEXANDRINA VO"
    customer = make_customer(fi, "Maximiliane Alexandrinas", "Berg")
    assert embossed_name_of(customer) == "MAXIMILIANE ALEXANDRINAS B"
    customer = make_customer(fi, "Maximiliane Alexandrin", "Berg")  # cut right after a space
    assert embossed_name_of(customer) == "MAXIMILIANE ALEXANDRIN BER"
    customer = make_customer(fi, "Maximiliane Alexandrinaa", "Berg")
    assert embossed_name_of(customer) == "MAXIMILIANE ALEXANDRINAA B"
    customer = make_customer(fi, "Maximiliane Alexandrinaaa", "Berg")
    assert embossed_name_of(customer) == "MAXIMILIANE ALEXANDRINAAA"


def test_a_given_embossed_name_is_kept(fi):
    card = issue_card(make_account(fi), embossed_name="DR A LOVELACE")
    assert fresh_card(card).embossed_name == "DR A LOVELACE"


# --- Secrets at rest ----------------------------------------------------------------------------


def test_the_database_row_holds_neither_the_clear_pan_nor_the_clear_cvv_columns(fi):
    card = issue_card(make_account(fi), form=PHYSICAL)
    pan = card.pan()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM cards_card WHERE id = %s", [card.pk])
        columns = [column.name for column in cursor.description]
        row = cursor.fetchone()
    values = dict(zip(columns, row, strict=True))
    assert not [name for name, value in values.items() if pan in str(value)]
    assert not [name for name in columns if name in ("pan", "cvv", "pin")]
    assert values["pan_encrypted"].startswith(f"{settings.FIELD_ENCRYPTION_KEYS.split(':')[0]}:")
    assert values["pan_encrypted"] != values["cvv_encrypted"]
    assert (values["pan_first6"], values["pan_last4"]) == (pan[:6], pan[-4:])


def test_the_pan_fingerprint_is_keyed(fi):
    card = issue_card(make_account(fi))
    pan = card.pan()
    assert card.pan_fingerprint != hashlib.sha256(pan.encode()).hexdigest()
    keyed = hmac.new(settings.PAN_FINGERPRINT_KEY.encode(), pan.encode(), hashlib.sha256)
    assert card.pan_fingerprint == keyed.hexdigest()


def test_the_ciphertexts_are_bound_to_their_card_and_column(fi):
    account = make_account(fi)
    first, second = issue_card(account), issue_card(account)
    Card.objects.filter(pk=second.pk).update(pan_encrypted=first.pan_encrypted)
    with pytest.raises(InvalidTag):
        fresh_card(second).pan()
    Card.objects.filter(pk=first.pk).update(cvv_encrypted=first.pan_encrypted)
    with pytest.raises(InvalidTag):
        fresh_card(first).cvv()
    assert fresh_card(first).pan() == first.pan()  # the original still decrypts


# --- Refusals -----------------------------------------------------------------------------------


def issue_with(fi, account, code, form=VIRTUAL, **kwargs):
    return issue_card(account, code=code, form=form, **kwargs)


@pytest.mark.parametrize(
    ("account_kind", "code"),
    [("prepaid", DEBIT), ("current", PREPAID), ("current", PREPAID_VIRTUAL)],
)
def test_a_card_product_that_does_not_fit_the_account_is_refused(fi, account_kind, code):
    account = make_account(fi, kind=account_kind)
    with refused(ValidationFailed) as excinfo:
        issue_with(fi, account, code)
    error = excinfo.value
    assert (error.status, error.code) == (400, "validation_error")
    assert list(error.details) == ["card_product_id"]
    expected_kind = "current" if code == DEBIT else "prepaid"
    assert f"needs a {expected_kind} account" in error.details["card_product_id"]


def test_a_ghs_prepaid_account_takes_a_prepaid_card(fi):
    product = AccountProduct.objects.get(institution=fi, code=AccountProduct.Code.GHS_PREPAID)
    customer = make_customer(fi)
    account = account_create(institution=fi, customer=customer, product=product, currency="GHS")
    assert issue_with(fi, account, PREPAID).account_id == account.pk
    with refused(ValidationFailed) as excinfo:
        issue_with(fi, account, DEBIT)
    assert list(excinfo.value.details) == ["card_product_id"]


def test_a_form_the_product_does_not_have_is_refused(fi):
    account = make_account(fi)
    with refused(ValidationFailed) as excinfo:
        issue_with(fi, account, PREPAID_VIRTUAL, PHYSICAL, delivery_address=ADDRESS)
    assert excinfo.value.details == {"form": "This product is issued as virtual only."}


def test_a_physical_card_needs_a_delivery_address_and_a_virtual_one_has_none(fi):
    account = make_account(fi)
    with refused(ValidationFailed) as excinfo:
        issue_card(account, form=PHYSICAL, delivery_address={})
    assert list(excinfo.value.details) == ["delivery_address"]
    with refused(ValidationFailed) as excinfo:
        issue_card(account, form=VIRTUAL, delivery_address=ADDRESS)
    assert list(excinfo.value.details) == ["delivery_address"]


def test_several_errors_are_reported_together(fi):
    account = make_account(fi, kind="current")
    stranger = make_customer(fi, "Grace", "Hopper")
    with refused(ValidationFailed) as excinfo:
        issue_with(fi, account, PREPAID_VIRTUAL, PHYSICAL, customer=stranger)
    assert sorted(excinfo.value.details) == ["card_product_id", "customer_id", "form"]


def test_a_customer_who_does_not_hold_the_account_gets_no_card_on_it(fi):
    account = make_account(fi)
    stranger = make_customer(fi, "Grace", "Hopper")
    with refused(ValidationFailed) as excinfo:
        issue_card(account, customer=stranger)
    assert excinfo.value.details == {"customer_id": "The customer does not hold this account."}


def test_both_holders_of_a_joint_account_may_get_a_card(fi):
    holder, second = make_customer(fi), make_customer(fi, "Grace", "Hopper")
    account = make_account(fi, holder, secondary_customer=second)
    assert issue_card(account, customer=second).customer_id == second.pk
    assert issue_card(account, customer=holder).customer_id == holder.pk


@pytest.mark.parametrize("status", [Account.Status.FROZEN, Account.Status.CLOSED])
def test_no_card_is_issued_on_an_account_that_is_not_active(fi, status):
    account = make_account(fi)
    account_set_status(account=account, status=status)
    account = Account.objects.get(pk=account.pk)
    with refused(AccountNotActive) as excinfo:
        issue_card(account)
    assert (excinfo.value.status, excinfo.value.code) == (422, "account_not_active")
    assert excinfo.value.details == {"account_id": account.pk, "status": status}


def test_the_account_status_is_read_under_lock_not_from_the_callers_copy(fi):
    account = make_account(fi)
    stale = Account.objects.get(pk=account.pk)
    account_set_status(account=account, status=Account.Status.FROZEN)
    assert stale.status == "active"
    with refused(AccountNotActive):
        issue_card(stale)


# --- Supplementary cards ------------------------------------------------------------------------


def test_a_supplementary_card_sits_on_the_primary_cards_account_for_another_customer(fi):
    account = make_account(fi)
    primary = issue_card(account)
    partner = make_customer(fi, "Grace", "Hopper")  # not a holder of the account
    supplementary = issue_card(account, customer=partner, primary_card=primary)
    supplementary = fresh_card(supplementary)
    assert supplementary.primary_card_id == primary.pk
    assert (supplementary.account_id, supplementary.customer_id) == (account.pk, partner.pk)
    assert supplementary.embossed_name == "GRACE HOPPER"
    assert list(primary.supplementary_cards.all()) == [supplementary]
    assert card_events(supplementary)[0][1]["primaryCardId"] == primary.pk


def test_a_supplementary_card_for_the_primary_cardholder_is_refused(fi):
    account = make_account(fi)
    primary = issue_card(account)
    with refused(ValidationFailed) as excinfo:
        issue_card(account, primary_card=primary)
    assert list(excinfo.value.details) == ["customer_id"]


def test_a_supplementary_card_of_a_supplementary_card_is_refused(fi):
    account = make_account(fi)
    primary = issue_card(account)
    partner, third = make_customer(fi, "Grace", "Hopper"), make_customer(fi, "Alan", "Turing")
    supplementary = issue_card(account, customer=partner, primary_card=primary)
    with refused(ValidationFailed) as excinfo:
        issue_card(account, customer=third, primary_card=supplementary)
    assert list(excinfo.value.details) == ["primary_card_id"]


def test_a_supplementary_card_on_another_account_is_refused(fi):
    account, other = make_account(fi), make_account(fi)
    primary = issue_card(account)
    with refused(ValidationFailed) as excinfo:
        issue_card(other, primary_card=primary)
    assert list(excinfo.value.details) == ["account_id"]


def test_a_supplementary_card_of_a_card_that_is_no_longer_live_is_refused(fi):
    account = make_account(fi)
    primary = issue_card(account, status=Card.Status.ACTIVE)
    card_set_status(card=primary, status=Card.Status.CLOSED)
    partner = make_customer(fi, "Grace", "Hopper")
    with refused(CardNotActive) as excinfo:
        issue_card(account, customer=partner, primary_card=primary)
    assert excinfo.value.details == {"primary_card_id": primary.pk, "status": "closed"}
