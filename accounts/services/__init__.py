"""Every write of the accounts app: one function per use case (see each module)."""

from .accounts import (
    account_create,
    account_set_overdraft_limit,
    account_set_status,
    account_update_metadata,
    check_overdraft_raise,
    internal_account,
)
from .adjustments import adjustment_create
from .fees import fee_charge, fee_waive, monthly_fees_charge
from .holds import (
    hold_capture,
    hold_expire,
    hold_place,
    hold_release,
    hold_update_metadata,
    holds_expire,
)
from .products import account_product_create, account_product_update, account_products_seed

__all__ = [
    "account_create",
    "account_product_create",
    "account_product_update",
    "account_products_seed",
    "account_set_overdraft_limit",
    "check_overdraft_raise",
    "account_set_status",
    "account_update_metadata",
    "adjustment_create",
    "fee_charge",
    "fee_waive",
    "hold_capture",
    "hold_expire",
    "hold_place",
    "hold_release",
    "hold_update_metadata",
    "holds_expire",
    "internal_account",
    "monthly_fees_charge",
]
