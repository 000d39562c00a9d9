"""One exception hierarchy for every error the API answers (docs/design.md section 5).

Each class carries its stable `code` and HTTP `status`; `details` is optional structured data.
Services raise these; `api.errors.exception_handler` renders them for both versions.
"""

from typing import Any


class TXError(Exception):
    status = 500
    code = "internal_error"
    message = "An internal error occurred."

    def __init__(self, message: str | None = None, *, details: Any = None):
        self.message = message or self.message
        self.details = details
        super().__init__(self.message)


# 400
class ValidationFailed(TXError):
    status = 400
    code = "validation_error"
    message = "The request is not valid."


class IdempotencyKeyMissing(TXError):
    status = 400
    code = "idempotency_key_missing"
    message = "The Idempotency-Key header is required on POST and PATCH."


class IdempotencyKeyInvalid(TXError):
    status = 400
    code = "idempotency_key_invalid"
    message = "The Idempotency-Key header must be a UUID v4."


# 401, 403, 404, 405
class AuthenticationFailed(TXError):
    status = 401
    code = "authentication_failed"
    message = "A valid API key is required in the x-api-key header."


class IpNotAllowed(TXError):
    status = 403
    code = "ip_not_allowed"
    message = "Requests from this address are not allowed for this API key."


class PermissionDenied(TXError):
    status = 403
    code = "permission_denied"
    message = "This API key does not have the scope this operation needs."


class NotFound(TXError):
    status = 404
    code = "not_found"
    message = "The requested resource does not exist."


class MethodNotAllowed(TXError):
    status = 405
    code = "method_not_allowed"
    message = "This method is not allowed on this path."


# 409
class IdempotencyKeyInUse(TXError):
    status = 409
    code = "idempotency_key_in_use"
    message = "A request with this Idempotency-Key is still being processed. Retry later."
    retry_after = 1


class InvalidStateTransition(TXError):
    status = 409
    code = "invalid_state_transition"
    message = "This state transition is not allowed."

    def __init__(self, message: str | None = None, *, from_state: str, to_state: str):
        super().__init__(message, details={"from": from_state, "to": to_state})


class AlreadyExists(TXError):
    """The object asked for exists already and there may be only one (a decisioning endpoint of
    an institution or of a card product); `details` names the one there is."""

    status = 409
    code = "already_exists"
    message = "It exists already: change the one there is."


# 413, 415
class PayloadTooLarge(TXError):
    status = 413
    code = "payload_too_large"
    message = "The request body is too large."


class UnsupportedMediaType(TXError):
    status = 415
    code = "unsupported_media_type"
    message = "Request bodies must be sent as application/json."


# 422: business rules. The operation ran and decided no; these results are stored for replay.
class BusinessRuleViolation(TXError):
    status = 422
    code = "business_rule_violation"


class InsufficientFunds(BusinessRuleViolation):
    code = "insufficient_funds"
    message = "The account's available balance does not cover this amount."


class AccountNotActive(BusinessRuleViolation):
    code = "account_not_active"
    message = "The account is not active for this operation."


class CurrencyMismatch(BusinessRuleViolation):
    code = "currency_mismatch"
    message = "The currencies of the request and the accounts do not match."


class BalanceOutOfRange(BusinessRuleViolation):
    code = "balance_out_of_range"
    message = (
        "This would take a balance of the account past what it can hold "
        "(-9223372036854775808 to 9223372036854775807 minor units): nothing was posted."
    )


class AmountExceedsRemaining(BusinessRuleViolation):
    code = "amount_exceeds_remaining"
    message = "The amount is larger than what remains to be captured or reversed."


class DuplicateReference(BusinessRuleViolation):
    code = "duplicate_reference"
    message = "A transfer with this reference exists already."


class BatchItemFailed(BusinessRuleViolation):
    code = "batch_item_failed"
    message = "An item of the atomic batch failed: nothing was posted."


class AccountNotEmpty(BusinessRuleViolation):
    code = "account_not_empty"
    message = "An account can only be closed with a zero balance and no active hold."


class InterestNotPosted(BusinessRuleViolation):
    code = "interest_not_posted"
    message = (
        "An account cannot be closed with interest accrued and not posted: settle it first "
        "(POST /accounts/{accountId}/interest/settlements)."
    )


class OverdraftLimitInUse(BusinessRuleViolation):
    code = "overdraft_limit_in_use"
    message = "The overdraft limit cannot go below what the account uses of it."


class ProductRetired(BusinessRuleViolation):
    code = "product_retired"
    message = "The product is retired: no new account or card can be opened on it."


class CardNotActive(BusinessRuleViolation):
    code = "card_not_active"
    message = "The card is not active for this operation."


class LimitExceeded(BusinessRuleViolation):
    code = "limit_exceeded"
    message = "The amount exceeds one of the card's limits."


class PinBlocked(BusinessRuleViolation):
    code = "pin_blocked"
    message = "The card's PIN is blocked after too many wrong tries."


class PinUnblockLimit(BusinessRuleViolation):
    code = "pin_unblock_limit"
    message = (
        "This card's PIN has been unblocked as often as the API may in 30 days; only the "
        "institution's staff can unblock it now."
    )


class IncorrectPin(BusinessRuleViolation):
    code = "incorrect_pin"
    message = "The PIN is not correct."


class DeclinedByMonitoring(BusinessRuleViolation):
    code = "declined_by_monitoring"
    message = "A transaction monitoring rule declined this payment."


class StatementTooLarge(BusinessRuleViolation):
    code = "statement_too_large"
    message = (
        "This statement has more lines than a PDF is made of: ask for the same period as CSV "
        "(details.csvPath, Accept: text/csv)."
    )


class IdempotencyKeyReused(TXError):
    status = 422
    code = "idempotency_key_reused"
    message = "This Idempotency-Key was already used with a different request."


# 429, 500, 503
class RateLimited(TXError):
    status = 429
    code = "rate_limited"
    message = "Too many requests for this API key. Retry after the time in Retry-After."

    def __init__(self, message: str | None = None, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class InternalError(TXError):
    pass


class ServiceUnavailable(TXError):
    status = 503
    code = "service_unavailable"
    message = "The service is temporarily unavailable. Retry later."
    retry_after = 5
