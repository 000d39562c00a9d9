"""Set-up shared by the card tests: institutions, customers, accounts and cards made through the
services (plain functions, no fixtures)."""

from contextlib import contextmanager

import pytest
from django.db import transaction

from accounts.models import Account, AccountProduct
from accounts.services import account_create
from cards.models import Card, CardProduct, CardSpend, SensitiveDetailsAccess
from cards.services import card_issue
from customers.models import Customer
from customers.services import customer_create
from events.models import Event
from events.payloads import event_payload
from tests.factories import InstitutionFactory

DEBIT = "DEBIT_STANDARD"
PREPAID = "PREPAID_STANDARD"
PREPAID_VIRTUAL = "PREPAID_VIRTUAL"
ADDRESS = {
    "line1": "Unter den Linden 1",
    "line2": "3. OG",
    "city": "Berlin",
    "postal_code": "10117",
    "country_code": "276",
}


def make_institution(*, time_zone: str | None = None):
    fi = InstitutionFactory()
    if time_zone is not None:
        fi.time_zone = time_zone
        fi.save(update_fields=["time_zone"])
    return fi


def make_customer(fi, first_name: str = "Ada", last_name: str = "Lovelace") -> Customer:
    return customer_create(
        institution=fi, first_name=first_name, last_name=last_name, country_code="276"
    )


def card_product(fi, code: str = PREPAID) -> CardProduct:
    return CardProduct.objects.get(institution=fi, code=code)


def make_account(
    fi,
    customer: Customer | None = None,
    *,
    kind: str = "prepaid",
    secondary_customer: Customer | None = None,
) -> Account:
    """An account of the institution's prepaid (`kind="prepaid"`) or current product."""
    code = AccountProduct.Code.PREPAID if kind == "prepaid" else AccountProduct.Code.CURRENT
    product = AccountProduct.objects.get(institution=fi, code=code)
    return account_create(
        institution=fi,
        customer=customer or make_customer(fi),
        secondary_customer=secondary_customer,
        product=product,
        currency=product.currency,
    )


def issue_card(
    account: Account,
    *,
    customer: Customer | None = None,
    code: str | None = None,
    form: str = CardProduct.Form.VIRTUAL,
    delivery_address: dict | None = None,
    status: str = Card.Status.INACTIVE,
    **kwargs,
) -> Card:
    """A card on `account` for its holder (or `customer`): a prepaid card on a prepaid account,
    a debit card on a current account, unless `code` names the product."""
    if code is None:
        code = PREPAID if account.product.kind == "prepaid" else DEBIT
    if form == CardProduct.Form.PHYSICAL and delivery_address is None:
        delivery_address = ADDRESS
    return card_issue(
        account=account,
        customer=customer or account.customer,
        product=card_product(account.institution, code),
        form=form,
        delivery_address=delivery_address,
        status=status,
        **kwargs,
    )


def new_card(fi=None, *, kind: str = "prepaid", **kwargs) -> Card:
    """A card on a new customer's new account (of a new institution unless `fi` is given)."""
    fi = fi or make_institution()
    return issue_card(make_account(fi, kind=kind), **kwargs)


def fresh_card(card: Card) -> Card:
    return Card.objects.select_related("institution", "product").get(pk=card.pk)


def force_status(card: Card, status: str) -> Card:
    """Put the card in `status` bypassing the rules (set-up only)."""
    Card.objects.filter(pk=card.pk).update(status=status)
    return fresh_card(card)


def card_events(card: Card, type_: str | None = None) -> list[tuple[str, dict]]:
    """(type, data) of the events about `card`, oldest first (ids of one millisecond do not sort
    by time: created_at first)."""
    events = Event.objects.filter(object_type="card", object_id=card.pk)
    if type_ is not None:
        events = events.filter(type=type_)
    return [
        (event.type, event_payload(event)["data"]) for event in events.order_by("created_at", "id")
    ]


def card_state() -> dict:
    """Everything a card service may write, to prove that a refused call wrote nothing."""
    return {
        "accounts": sorted(Account.objects.values_list("pk", "status")),
        "cards": {row["id"]: row for row in Card.objects.values()},
        "spend": sorted(CardSpend.objects.values_list("card_id", "day", "spent", "cash_spent")),
        "accesses": sorted(SensitiveDetailsAccess.objects.values_list("pk", flat=True)),
        "events": sorted(Event.objects.values_list("pk", flat=True)),
    }


@contextmanager
def refused(error_class):
    """The block raises `error_class` and changes nothing (`card_state`). The services run
    without a savepoint of their own: like the API view, this gives the refusal one."""
    before = card_state()
    with pytest.raises(error_class) as excinfo:
        with transaction.atomic():
            yield excinfo
    assert card_state() == before
