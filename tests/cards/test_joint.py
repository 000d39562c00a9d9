"""Joint accounts (`joint_account_open`): one account held by two customers and one card for
each, all or nothing."""

import pytest

from accounts.models import Account, AccountProduct
from cards.models import Card, CardProduct
from cards.services import CardRequest, joint_account_open
from core.actors import SYSTEM
from core.exceptions import ValidationFailed
from events.models import Event
from events.payloads import event_payload

from .helpers import (
    ADDRESS,
    DEBIT,
    PREPAID,
    PREPAID_VIRTUAL,
    card_events,
    card_product,
    make_customer,
    make_institution,
    refused,
)

pytestmark = pytest.mark.django_db

PHYSICAL, VIRTUAL = CardProduct.Form.PHYSICAL, CardProduct.Form.VIRTUAL


@pytest.fixture
def fi():
    return make_institution()


@pytest.fixture
def holders(fi):
    return make_customer(fi, "Ada", "Lovelace"), make_customer(fi, "Grace", "Hopper")


def request(fi, customer, code=PREPAID, form=VIRTUAL, **kwargs) -> CardRequest:
    return CardRequest(customer=customer, product=card_product(fi, code), form=form, **kwargs)


def open_joint(fi, primary, secondary, **kwargs):
    return joint_account_open(
        institution=fi, primary=primary, secondary=secondary, actor=SYSTEM, **kwargs
    )


def counts() -> tuple[int, int, int]:
    return Account.objects.count(), Card.objects.count(), Event.objects.count()


def test_one_account_two_holders_one_card_each(fi, holders):
    ada, grace = holders
    account, first, second = open_joint(
        fi,
        request(fi, ada, PREPAID, PHYSICAL, delivery_address=ADDRESS),
        request(fi, grace, PREPAID, VIRTUAL, embossed_name="G HOPPER"),
    )
    account = Account.objects.get(pk=account.pk)
    assert (account.customer_id, account.secondary_customer_id) == (ada.pk, grace.pk)
    assert account.product.code == AccountProduct.Code.PREPAID
    assert (account.currency, account.status) == (fi.currency, "active")
    assert sorted(
        account.cards.values_list("pk", "customer_id", "form", "embossed_name")
    ) == sorted(
        [
            (first.pk, ada.pk, "physical", "ADA LOVELACE"),
            (second.pk, grace.pk, "virtual", "G HOPPER"),
        ]
    )
    assert first.delivery_address == ADDRESS and second.delivery_address is None
    assert first.primary_card_id is None and second.primary_card_id is None

    opened = Event.objects.get(type="account.opened", object_id=account.pk)
    assert event_payload(opened)["data"] == {
        "customerId": ada.pk,
        "productRid": account.product_id,
        "secondaryCustomerId": grace.pk,
    }
    for card, customer in ((first, ada), (second, grace)):
        [(type_, data)] = card_events(card)
        assert (type_, data["accountId"], data["customerId"]) == (
            "card.issued",
            account.pk,
            customer.pk,
        )


@pytest.mark.parametrize(
    ("code", "account_code"),
    [
        (DEBIT, AccountProduct.Code.CURRENT),
        (PREPAID, AccountProduct.Code.PREPAID),
        (PREPAID_VIRTUAL, AccountProduct.Code.PREPAID),
    ],
)
def test_the_account_type_follows_the_card_kind_by_default(fi, holders, code, account_code):
    account, first, second = open_joint(
        fi, request(fi, holders[0], code), request(fi, holders[1], code)
    )
    assert account.product.code == account_code
    assert {first.product.code, second.product.code} == {code}


def test_a_given_account_type_is_used(fi, holders):
    ghs = AccountProduct.objects.get(institution=fi, code=AccountProduct.Code.GHS_PREPAID)
    account, _, _ = open_joint(
        fi, request(fi, holders[0]), request(fi, holders[1]), account_product=ghs
    )
    assert (account.product_id, account.currency) == (ghs.pk, "GHS")


def test_the_same_customer_twice_is_refused(fi, holders):
    before = counts()
    with refused(ValidationFailed) as excinfo:
        open_joint(fi, request(fi, holders[0]), request(fi, holders[0]))
    assert list(excinfo.value.details) == ["secondary_card.customer_id"]
    assert counts() == before


def test_a_card_that_does_not_fit_the_account_type_is_refused_with_prefixed_keys(fi, holders):
    before = counts()
    with refused(ValidationFailed) as excinfo:
        open_joint(fi, request(fi, holders[0], PREPAID), request(fi, holders[1], DEBIT))
    assert list(excinfo.value.details) == ["secondary_card.card_product_id"]

    current = AccountProduct.objects.get(institution=fi, code=AccountProduct.Code.CURRENT)
    with refused(ValidationFailed) as excinfo:
        open_joint(
            fi,
            request(fi, holders[0], PREPAID),
            request(fi, holders[1], DEBIT),
            account_product=current,
        )
    assert list(excinfo.value.details) == ["primary_card.card_product_id"]
    assert counts() == before


def test_every_error_of_both_cards_is_reported_with_its_prefix(fi, holders):
    before = counts()
    with refused(ValidationFailed) as excinfo:
        open_joint(
            fi,
            request(fi, holders[0], DEBIT, PHYSICAL),  # no delivery address
            request(fi, holders[0], PREPAID_VIRTUAL, PHYSICAL, delivery_address=ADDRESS),
        )
    assert sorted(excinfo.value.details) == [
        "primary_card.delivery_address",
        "secondary_card.card_product_id",
        "secondary_card.customer_id",
        "secondary_card.form",
    ]
    assert counts() == before


def test_a_virtual_card_with_a_delivery_address_is_refused(fi, holders):
    before = counts()
    with refused(ValidationFailed) as excinfo:
        open_joint(
            fi,
            request(fi, holders[0]),
            request(fi, holders[1], delivery_address=ADDRESS),
        )
    assert list(excinfo.value.details) == ["secondary_card.delivery_address"]
    assert counts() == before


def test_a_refusal_inside_the_transaction_writes_nothing(fi, holders, monkeypatch):
    """If the second card fails after the account and the first card are written, the whole
    opening is undone."""
    from cards.services import joint as joint_module

    calls = []
    real_issue = joint_module.card_issue

    def failing_second(**kwargs):
        calls.append(kwargs["customer"].pk)
        if len(calls) == 2:
            raise ValidationFailed(details={"embossedName": "boom"})
        return real_issue(**kwargs)

    monkeypatch.setattr(joint_module, "card_issue", failing_second)
    before = counts()
    with refused(ValidationFailed):
        open_joint(fi, request(fi, holders[0]), request(fi, holders[1]))
    assert calls == [holders[0].pk, holders[1].pk]
    assert counts() == before
