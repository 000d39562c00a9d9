"""`x-api-key` authentication, the key's IP allowlist, and scope checks (docs/design.md section 3).

Missing, unknown, revoked or expired key: 401 `authentication_failed`, the same answer for each
so that a caller learns nothing about which keys exist. A valid key used from outside its
allowlist: 403 `ip_not_allowed`. Both refusals count against the client address and an accepted
request against its key and institution (`api.ratelimit`: a refusal at once, an accepted request
in its process's batches); past a limit the answer is 429 `rate_limited` instead. The key itself
comes from a per-process cache with bounded staleness (`institutions.key_cache`).
"""

from dataclasses import dataclass

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Q, Value
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from api import ratelimit
from api.client_ip import address_in, client_address
from api.context import context_of
from core.exceptions import AuthenticationFailed, IpNotAllowed, PermissionDenied
from institutions import key_cache, keys, scopes
from institutions.models import ApiKey, Institution

HEADER = "HTTP_X_API_KEY"


@dataclass(frozen=True)
class ApiClient:
    """The caller of a request: `request.user` in API views."""

    api_key: ApiKey
    institution: Institution

    is_authenticated = True
    is_anonymous = False

    def has_scope(self, scope: str) -> bool:
        return scope in self.api_key.scopes


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        address = client_address(request._request)
        try:
            api_key = self._verified_key(request, address)
        except (AuthenticationFailed, IpNotAllowed):
            # Counted per address, once; past the limit this raises 429 in its place.
            ratelimit.count_refusal(address=address)
            raise
        ctx = context_of(request)  # set first: a 429 is logged with its key
        ctx.institution_id = api_key.institution_id
        ctx.api_key_id = api_key.id
        ratelimit.count_request(api_key=api_key, address=address)
        return ApiClient(api_key=api_key, institution=api_key.institution), api_key

    def _verified_key(self, request, address) -> ApiKey:
        """The presented key, usable and allowed from `address`; else AuthenticationFailed or
        IpNotAllowed."""
        presented = request.META.get(HEADER, "")
        parts = keys.split(presented.strip())
        if parts is None:
            raise AuthenticationFailed()
        prefix, secret = parts
        api_key = key_cache.get(prefix)
        if api_key is None:
            # One query: the key, its institution and its allowlist.
            api_key = (
                ApiKey.objects.select_related("institution")
                .annotate(
                    cidrs=ArrayAgg(
                        "allowed_networks__cidr",
                        filter=Q(allowed_networks__isnull=False),
                        default=Value([]),
                    )
                )
                .filter(prefix=prefix)
                .first()
            )
            if api_key is not None:
                key_cache.put(prefix, api_key)
        if api_key is None or not keys.matches(secret, api_key.secret_hash):
            raise AuthenticationFailed()
        if not api_key.is_usable(timezone.now()):
            raise AuthenticationFailed()
        if not address_in(address, api_key.cidrs):
            raise IpNotAllowed()
        return api_key

    def authenticate_header(self, request):
        return 'ApiKey header="x-api-key"'


def required_scope(view, method: str) -> str | None:
    """The one scope an operation needs: the view's `read_scope` for GET and HEAD (`read` unless
    it says otherwise), its `write_scope` for every other method (None: nobody may)."""
    if method in ("GET", "HEAD"):
        return getattr(view, "read_scope", scopes.READ)
    return getattr(view, "write_scope", None)


class HasApiKey(BasePermission):
    def has_permission(self, request, view):
        if not isinstance(request.user, ApiClient):
            raise AuthenticationFailed()
        if request.method not in view.allowed_methods:
            return True  # no such operation: the view answers 405, not 403
        scope = required_scope(view, request.method)
        if scope is None or not request.user.has_scope(scope):
            raise PermissionDenied(details={"requiredScope": scope} if scope else None)
        return True
