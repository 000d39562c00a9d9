from ..locks import lock_card
from .access import card_sensitive_details
from .controls import card_security_settings_set
from .expiry import RenewalReport, cards_expire, cards_renew_expiring
from .issuance import card_issue
from .joint import CardRequest, joint_account_open
from .lifecycle import card_reissue, card_renew, card_replace
from .limits import (
    card_limits_set,
    card_usage,
    check_limits,
    check_limits_order,
    count_payment,
    spend,
    spend_more,
    unspend,
)
from .pan_guard import card_by_pan
from .pin import card_pin_set, card_pin_try, card_pin_unblock, card_pin_verify
from .products import card_product_create, card_product_update, card_products_seed
from .status import card_set_status, card_update

__all__ = [
    "CardRequest",
    "RenewalReport",
    "card_by_pan",
    "card_issue",
    "card_limits_set",
    "card_pin_set",
    "card_pin_try",
    "card_pin_unblock",
    "card_pin_verify",
    "card_product_create",
    "card_product_update",
    "card_products_seed",
    "card_reissue",
    "card_renew",
    "card_replace",
    "card_security_settings_set",
    "card_sensitive_details",
    "card_set_status",
    "check_limits_order",
    "card_update",
    "card_usage",
    "check_limits",
    "count_payment",
    "cards_expire",
    "cards_renew_expiring",
    "joint_account_open",
    "lock_card",
    "spend",
    "spend_more",
    "unspend",
]
