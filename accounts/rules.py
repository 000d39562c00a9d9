"""The one business rule a movement of money can check before locking anything: an account's
currency never changes. Status and funds are checked on the locked accounts by the posting
function (`accounts/sql/posting.sql`)."""

from core.exceptions import CurrencyMismatch

from .models import Account


def check_currency(account: Account, currency: str) -> None:
    if account.currency != currency:
        raise CurrencyMismatch(
            f"The account is in {account.currency}, the request in {currency}.",
            details={
                "account_id": account.pk,
                "account_currency": account.currency,
                "currency": currency,
            },
        )
