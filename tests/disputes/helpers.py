"""What the dispute tests share: a presented card payment to dispute, and the dispute's moves
over HTTP (v2)."""

from dataclasses import dataclass

from accounts.models import Account
from tests.accounts.api.helpers import created, resource
from tests.authorizations.helpers import START, approved, funded, presented

CONTACTED = "2026-11-20T09:30:00.000Z"
PAID = 4_000  # the payment disputed


@dataclass
class Payment:
    account_id: str
    card_id: str
    authorization_id: str
    transaction_id: str


def payment(api, amount: int = PAID) -> Payment:
    """A funded card's presented payment of `amount` (the account has START - amount)."""
    f = funded(api)
    auth = approved(api, f.card_id, amount)
    body = presented(api, auth["authorizationId"])
    return Payment(f.account_id, f.card_id, auth["authorizationId"], body["transactionId"])


def file(api, authorization_id: str, amount: int = PAID, **fields):
    body = {
        "authorizationId": authorization_id,
        "amount": amount,
        "reason": "not_received",
        "cardholderContactedAt": CONTACTED,
        **fields,
    }
    return api.post("/disputes", body)


def filed(api, authorization_id: str, amount: int = PAID, **fields) -> dict:
    return created(file(api, authorization_id, amount, **fields), api.version)


def move(api, dispute_id: str, to: str, **fields):
    return api.post(f"/disputes/{dispute_id}/transitions", {"to": to, **fields})


def moved(api, dispute_id: str, to: str, **fields) -> dict:
    return created(move(api, dispute_id, to, **fields), api.version)


def network(api, dispute_id: str, type: str, **fields):
    return api.post(f"/disputes/{dispute_id}/network-messages", {"type": type, **fields})


def answered(api, dispute_id: str, type: str, **fields) -> dict:
    return created(network(api, dispute_id, type, **fields), api.version)


def dispute_of(api, dispute_id: str) -> dict:
    return resource(api.get(f"/disputes/{dispute_id}"), api.version)


def split(dispute: dict) -> tuple[int, int, int, int]:
    """(recovered, cardholderLiable, writtenOff, remaining)."""
    return (
        dispute["recovered"],
        dispute["cardholderLiable"],
        dispute["writtenOff"],
        dispute["remaining"],
    )


def internal_balance(institution_code: str, account_id: str) -> int:
    """The posted balance of the institution's internal account `institution_code` in the
    currency of `account_id` (0 when it was never used)."""
    account = Account.objects.get(pk=account_id)
    internal = Account.objects.filter(
        institution_id=account.institution_id,
        internal_code=institution_code,
        currency=account.currency,
    ).first()
    return 0 if internal is None else internal.posted


__all__ = ["START"]
