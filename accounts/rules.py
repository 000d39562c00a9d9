"""The business rules a movement of money must pass, checked on locked accounts."""

from core.exceptions import AccountNotActive, CurrencyMismatch, InsufficientFunds

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


def check_can_credit(account: Account) -> None:
    """Money may come into an active or frozen account, never into a closed one."""
    if account.status == Account.Status.CLOSED:
        raise AccountNotActive(
            "The account is closed.", details={"account_id": account.pk, "status": account.status}
        )


def check_can_debit(account: Account, amount: int, *, reserved: bool = False) -> None:
    """Money may leave only an active account, and only what is available (a customer account;
    internal accounts carry the other side of every movement and may go negative).
    `reserved`: the amount is already held on the account (a capture), so funds are not checked
    again."""
    if account.status != Account.Status.ACTIVE:
        raise AccountNotActive(
            f"The account is {account.status}: money cannot leave it.",
            details={"account_id": account.pk, "status": account.status},
        )
    if not account.is_internal and not reserved and account.available < amount:
        raise InsufficientFunds(
            details={"account_id": account.pk, "available": account.available, "amount": amount}
        )
