"""API key scopes and roles (docs/design.md section 3; docs/tenancy-and-keys.md has the table).

Every operation requires exactly one scope. A view names it: `read_scope` for GET (default
`read`), `write_scope` for POST and PATCH (no default: a write without a declared scope is refused
to every key, so a new view cannot be open by accident).

Some bodies need a second scope on top of the operation's (`BodyScope`): a full PAN needs
`cards:sensitive`; credit (an overdraft limit, a product's overdraft cap or fee above 0) and a
card return that refunds no authorization need `money:adjust`, the scope that moves the
institution's money into and out of customers' accounts. Such a view lists them in
`body_scopes` (read by the OpenAPI documents, `api.schema`, and by the scope table's test) and
calls `require_body_scopes` right after parsing, before anything the body names is looked up or
changed: a refusal leaves nothing behind, no idempotency record either.
"""

from collections.abc import Callable
from dataclasses import dataclass

READ = "read"
CUSTOMERS_WRITE = "customers:write"
ACCOUNTS_WRITE = "accounts:write"
CARDS_WRITE = "cards:write"
MONEY_WRITE = "money:write"
MONEY_ADJUST = "money:adjust"
NETWORK = "network"
CARDS_SENSITIVE = "cards:sensitive"
CARDS_PIN = "cards:pin"
WEBHOOKS_WRITE = "webhooks:write"
MONITORING_WRITE = "monitoring:write"
PRODUCTS_WRITE = "products:write"
DECISIONING_WRITE = "decisioning:write"
DISPUTES_WRITE = "disputes:write"
# Payments to and from other banks (docs/payments.md): external accounts; payment orders, which
# send money out of the bank (not in `full`: granted on purpose); the bank's side of the rails'
# files (granted like `network`).
EXTERNAL_ACCOUNTS_WRITE = "external_accounts:write"
PAYMENTS_WRITE = "payments:write"
BANK = "bank"

ALL = [
    READ,
    CUSTOMERS_WRITE,
    ACCOUNTS_WRITE,
    CARDS_WRITE,
    MONEY_WRITE,
    MONEY_ADJUST,
    NETWORK,
    CARDS_SENSITIVE,
    CARDS_PIN,
    WEBHOOKS_WRITE,
    MONITORING_WRITE,
    PRODUCTS_WRITE,
    DECISIONING_WRITE,
    DISPUTES_WRITE,
    EXTERNAL_ACCOUNTS_WRITE,
    PAYMENTS_WRITE,
    BANK,
]

# Presets for `create_api_key --role`. `full` is what an issuing program's back end needs; the
# card network's side and full card numbers are granted only on purpose.
ROLES = {
    "full": [
        scope for scope in ALL if scope not in (CARDS_SENSITIVE, NETWORK, PAYMENTS_WRITE, BANK)
    ],
    "readonly": [READ],
    "network": [READ, NETWORK],
    "bank": [READ, BANK],
}


def scopes_for(*, role: str | None = None, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The scopes of a role plus `extra`, sorted and without repeats (unknown names are left for
    the caller to refuse)."""
    return sorted(set(ROLES[role] if role else []) | set(extra))


def require_scope(request, scope: str) -> None:
    """Refuse (403 permission_denied) a request whose key lacks `scope`; for what a body adds,
    e.g. a PAN in a transfer."""
    from core.exceptions import PermissionDenied

    if not request.user.has_scope(scope):
        raise PermissionDenied(details={"required_scope": scope})


@dataclass(frozen=True)
class BodyScope:
    """A scope that a request body adds to its operation's own: `scope` is needed when
    `needed(data)` is true of the parsed body. `when` says so in the documents: "Also requires
    `<scope>` with <when>." (`api.schema`; docs/tenancy-and-keys.md)."""

    scope: str
    when: str
    needed: Callable[[dict], bool]


def require_body_scopes(request, body_scopes, data: dict) -> None:
    """Refuse (403 permission_denied, `details.requiredScope`) a parsed body that needs a scope
    of `body_scopes` (a view's `BodyScope`s, checked in their order) the key lacks."""
    for body_scope in body_scopes:
        if body_scope.needed(data):
            require_scope(request, body_scope.scope)
            # Kept with the request's idempotency record: its replays need the scope too.
            request.tx_body_scopes = {*getattr(request, "tx_body_scopes", ()), body_scope.scope}


def above_zero(*fields: str) -> Callable[[dict], bool]:
    """`BodyScope.needed` for credit: any of `fields` (keys of the parsed body) above 0. Zero
    lends and charges nothing, so withdrawing an overdraft or a fee needs no `money:adjust`."""
    return lambda data: any(data.get(field, 0) > 0 for field in fields)
