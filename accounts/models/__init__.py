"""Accounts and the ledger behind them.

- `products`: the account types (financial contract types) an institution offers.
- `accounts`: customer accounts and the institution's internal accounts, with stored balances.
- `ledger`: journals and their append-only entries (double entry).
- `holds`: pending debits that reduce the available balance until captured or released, and
  the pending balance after each one placed or closed (the balance at an instant).
- `adjustments`: loads and unloads of an account against the institution's funding account.
- `statement`: statement lines ("transactions" in the spec), one per account per posting.
- `fees`: fees charged under the products' fee schedules (docs/fees.md).
"""

from .accounts import Account
from .adjustments import Adjustment
from .fees import Fee
from .holds import Hold, HoldChange
from .ledger import Entry, Journal
from .products import AccountProduct
from .statement import StatementLine

__all__ = [
    "Account",
    "AccountProduct",
    "Adjustment",
    "Entry",
    "Fee",
    "Hold",
    "HoldChange",
    "Journal",
    "StatementLine",
]
