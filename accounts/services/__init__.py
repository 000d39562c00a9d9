"""Every write of the accounts app: one function per use case (see each module)."""

from .accounts import account_create, account_set_status, internal_account
from .adjustments import adjustment_create
from .holds import hold_capture, hold_expire, hold_place, hold_release, holds_expire
from .products import account_products_seed

__all__ = [
    "account_create",
    "account_products_seed",
    "account_set_status",
    "adjustment_create",
    "hold_capture",
    "hold_expire",
    "hold_place",
    "hold_release",
    "holds_expire",
    "internal_account",
]
