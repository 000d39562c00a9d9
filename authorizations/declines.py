"""Decline codes of card authorizations, in the order the decision checks them
(`authorizations.services.authorize`). The first failing check decides; a decline is a normal
result (201 with `approved: false`), not an HTTP error.
"""

CARD_NOT_ACTIVE = "card_not_active"  # status is not active
CARD_EXPIRED = "card_expired"  # past the last day of its expiry month
CURRENCY_MISMATCH = "currency_mismatch"  # not the account's currency (no conversion here)
CHANNEL_NOT_ALLOWED = "channel_not_allowed"  # ecommerce / contactless / atm switched off
INTERNATIONAL_NOT_ALLOWED = "international_not_allowed"  # abroad with `international` off
MCC_BLOCKED = "mcc_blocked"  # the merchant category is in the card's blockedMccs
COUNTRY_BLOCKED = "country_blocked"  # the merchant country is in the card's blockedCountries
PIN_BLOCKED = "pin_blocked"  # a PIN was given and the card's PIN is blocked
INCORRECT_PIN = "incorrect_pin"  # a PIN was given and it is wrong (or none is set)
LIMIT_EXCEEDED = "limit_exceeded"  # details.limit: perTransaction, daily, monthly, dailyCash
DECLINED_BY_MONITORING = "declined_by_monitoring"  # a monitoring rule with action decline hit
ACCOUNT_NOT_ACTIVE = "account_not_active"  # the account is frozen or closed
INSUFFICIENT_FUNDS = "insufficient_funds"  # the account's available balance is too low
# After TX's own checks, from the program's decisioning endpoint (docs/decisioning.md):
PROGRAM_DECLINED = "program_declined"  # its answer; details.program_decline_code when it gave one
PROGRAM_UNAVAILABLE = "program_unavailable"  # no valid answer, and its on_failure is decline
# A JIT program approved, and its funding account cannot pay for it (details: available, amount).
INSUFFICIENT_PROGRAM_FUNDS = "insufficient_program_funds"
# An increment's only: its authorization's hold expired while the program decided it.
AUTHORIZATION_EXPIRED = "authorization_expired"

ORDER = [
    CARD_NOT_ACTIVE,
    CARD_EXPIRED,
    CURRENCY_MISMATCH,
    CHANNEL_NOT_ALLOWED,
    INTERNATIONAL_NOT_ALLOWED,
    MCC_BLOCKED,
    COUNTRY_BLOCKED,
    PIN_BLOCKED,
    INCORRECT_PIN,
    LIMIT_EXCEEDED,
    DECLINED_BY_MONITORING,
    ACCOUNT_NOT_ACTIVE,
    INSUFFICIENT_FUNDS,
]
# The program's, after every check of ORDER passed (docs/decisioning.md).
PROGRAM = [PROGRAM_DECLINED, PROGRAM_UNAVAILABLE, INSUFFICIENT_PROGRAM_FUNDS]
# Every code an authorization or an increment may carry.
CODES = ORDER + PROGRAM + [AUTHORIZATION_EXPIRED]
