"""API key scopes and roles (DESIGN.md section 3; docs/tenancy-and-keys.md has the table).

Every operation requires exactly one scope. A view names it: `read_scope` for GET (default
`read`), `write_scope` for POST and PATCH (no default: a write without a declared scope is refused
to every key, so a new view cannot be open by accident). Operations that take a full PAN in their
body also need `cards:sensitive` for that body: such a view names `pan_scope` (read by the OpenAPI
documents, `api.schema`) and calls `require_scope` after parsing, before the PAN is looked up.
"""

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
]

# Presets for `create_api_key --role`. `full` is what an issuing program's back end needs; the
# card network's side and full card numbers are granted only on purpose.
ROLES = {
    "full": [scope for scope in ALL if scope not in (CARDS_SENSITIVE, NETWORK)],
    "readonly": [READ],
    "network": [READ, NETWORK],
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
        raise PermissionDenied(details={"requiredScope": scope})
