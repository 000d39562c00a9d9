"""Reads of accounts, products and holds, always scoped to one institution: another
institution's object answers the same 404 as an unknown id."""

from django.db.models import Q

from core.exceptions import NotFound
from institutions.models import Institution

from .models import Account, AccountProduct, Hold


def account_product_list(*, institution: Institution):
    return AccountProduct.objects.filter(institution=institution)


def account_product_get(*, institution: Institution, product_id: str) -> AccountProduct:
    product = AccountProduct.objects.filter(institution=institution, id=product_id).first()
    if product is None:
        raise NotFound("No account product with this rid.")
    return product


def account_list(*, institution: Institution, customer_id: str | None = None):
    accounts = Account.objects.filter(institution=institution, kind=Account.Kind.CUSTOMER)
    if customer_id:
        accounts = accounts.filter(customer_id=customer_id)
    return accounts.select_related("product")


def account_get(*, institution: Institution, account_id: str) -> Account:
    account = (
        Account.objects.select_related("product")
        .filter(institution=institution, kind=Account.Kind.CUSTOMER, id=account_id)
        .first()
    )
    if account is None:
        raise NotFound("No account with this id.")
    return account


def account_by_number(*, institution: Institution, account_number: str) -> Account:
    account = (
        Account.objects.select_related("product")
        .filter(institution=institution, kind=Account.Kind.CUSTOMER, account_number=account_number)
        .first()
    )
    if account is None:
        raise NotFound("No account with this account number.")
    return account


def accounts_of_endpoints(*, institution: Institution, endpoints: list[dict]) -> list[Account]:
    """The accounts named by `{"accountId"}` or `{"accountNumber"}` objects, in their order, in
    one query (the transfer path is hot). 404 when one does not exist in the institution."""
    ids = [endpoint["accountId"] for endpoint in endpoints if "accountId" in endpoint]
    numbers = [endpoint["accountNumber"] for endpoint in endpoints if "accountNumber" in endpoint]
    found = list(
        Account.objects.filter(institution=institution, kind=Account.Kind.CUSTOMER).filter(
            Q(pk__in=ids) | Q(account_number__in=numbers)
        )
    )
    by_id = {account.pk: account for account in found}
    by_number = {account.account_number: account for account in found}
    accounts = []
    for endpoint in endpoints:
        if "accountId" in endpoint:
            account = by_id.get(endpoint["accountId"])
            missing = "No account with this id."
        else:
            account = by_number.get(endpoint["accountNumber"])
            missing = "No account with this account number."
        if account is None:
            raise NotFound(missing)
        accounts.append(account)
    return accounts


def hold_list(
    *, institution: Institution, account_id: str | None = None, status: str | None = None
):
    holds = Hold.objects.filter(institution=institution)
    if account_id:
        holds = holds.filter(account_id=account_id)
    if status:
        holds = holds.filter(status=status)
    return holds


def hold_get(*, institution: Institution, hold_id: str) -> Hold:
    hold = Hold.objects.filter(institution=institution, id=hold_id).first()
    if hold is None:
        raise NotFound("No hold with this id.")
    return hold
