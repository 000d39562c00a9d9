"""An account's IBAN, which `payments` derives from its institution's SEPA profile
(docs/payments.md, "Inbound SEPA"): `payments` registers the function when Django starts
(docs/architecture.md, "The rule, and how the upper layers are heard"), the account's v2
representation calls it without knowing who it is. Nothing registered: no account has one."""

from collections.abc import Callable

# (account, memo) -> the IBAN or None; `memo` is the caller's dict for one response, where the
# function keeps what it looked up (the profile of each institution) across a list's accounts.
IbanOf = Callable[[object, dict], str | None]
_registered: list[IbanOf] = []
# What the function reads beside the account, as `select_related` paths: an account read for its
# representation joins them (`accounts.selectors.account_get`), so the IBAN costs no query.
_related: list[str] = []


def register(function: IbanOf, related: tuple[str, ...] = ()) -> None:
    if function not in _registered:
        _registered.append(function)
        _related.extend(path for path in related if path not in _related)


def related() -> tuple[str, ...]:
    return tuple(_related)


def account_iban(account, memo: dict) -> str | None:
    for function in _registered:
        iban = function(account, memo)
        if iban is not None:
            return iban
    return None
