"""What must hold before an account closes, beyond its own balances (docs/architecture.md, the
registration pattern): an app above `accounts` registers a check when Django starts (interest:
no interest accrued and not posted, docs/interest.md). `account_set_status` runs them, the
account's row locked, before it closes the account; a check refuses by raising a TX error."""

from collections.abc import Callable

CHECKS: list[Callable] = []


def register(check: Callable) -> None:
    """Add `check(account)`: raises a TX error (a 422 of the catalogue) when the account may
    not close."""
    if check not in CHECKS:
        CHECKS.append(check)


def close_checks_run(account) -> None:
    for check in CHECKS:
        check(account)
