"""`TXView`: the base of every API view. One place for the behaviour both versions share.

DRF's `initial()` authenticates, checks the allowlist and scopes, and rate-limits; then every
POST and PATCH runs as one operation (`core.operations`: a durable transaction, the key as the
actor, what a refusal keeps) together with its idempotency record (`api.idempotency`). Views
only parse, call one service or selector, and hand a version-neutral resource dict to
`respond`/`created`/`respond_list`, which apply the version's adapter.
"""

from django.db import transaction
from rest_framework.response import Response
from rest_framework.views import APIView

from api import idempotency, replicas
from api.context import context_of
from api.models import IdempotencyRecord
from api.pagination import paginate
from api.versions import V1, V2, created_status, list_body, success_body, version_of_path
from core import operations
from core.actors import Actor, actor_enter, actor_exit
from core.exceptions import TXError


class TXView(APIView):
    # No OPTIONS: DRF's metadata answer would describe views, not the documented contract.
    http_method_names = ["get", "post", "patch", "head"]
    # False: a GET whose reads decide a write reads the primary even with replicas (api.replicas).
    replica_reads = True

    @property
    def allowed_methods(self):
        # Asked for before DRF has set `request.version`: the path tells the version.
        methods = super().allowed_methods
        request = getattr(self, "request", None)
        if request is not None and version_of_path(request.path) == V1 and self._v1_post_is_patch():
            methods.append("POST")
        return methods

    # Per-version serializers: {"v1": ..., "v2": ...}, read through `for_version`.
    def for_version(self, mapping: dict):
        return mapping[self.request.version]

    @property
    def institution(self):
        return self.request.user.institution

    @property
    def api_client(self):
        return self.request.user

    def parse(self, serializer_class, *, partial: bool = False, instance=None) -> dict:
        serializer = serializer_class(data=self.request.data, partial=partial, instance=instance)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def parse_query(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def meta(self) -> dict:
        return context_of(self.request).meta()

    def respond(self, resource: dict, status: int = 200) -> Response:
        return Response(success_body(self.request.version, resource, self.meta()), status=status)

    def created(self, resource: dict) -> Response:
        return self.respond(resource, status=created_status(self.request.version))

    def respond_list(self, queryset, serializer_class, order_key: str = "pk") -> Response:
        rows, next_cursor = paginate(self.request, queryset, order_key)
        # One serializer for the page: DRF deep-copies a serializer's fields per instance.
        items = serializer_class(rows, many=True).data
        return Response(list_body(self.request.version, items, next_cursor, self.meta()))

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # Authenticated and allowed: the request's key is the actor of everything it does
        # (`core.actors`; every event names it), until `dispatch` ends.
        self._actor_token = actor_enter(Actor(api_key=request.auth))

    # --- dispatch: DRF's, with writes routed through `_run_write`.
    def dispatch(self, request, *args, **kwargs):
        self._actor_token = None
        try:
            return self._dispatch(request, *args, **kwargs)
        finally:
            if self._actor_token is not None:
                actor_exit(self._actor_token)
                self._actor_token = None

    def _dispatch(self, request, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs
        request = self.initialize_request(request, *args, **kwargs)
        self.request = request
        self.headers = self.default_response_headers
        try:
            self.initial(request, *args, **kwargs)
            method = request.method.lower()
            handler = (
                getattr(self, method, None) if method in self.http_method_names else None
            ) or self.http_method_not_allowed
            if method == "post" and request.version == V1 and self._v1_post_is_patch():
                handler = self.patch
            if (
                request.method in idempotency.WRITE_METHODS
                and handler != self.http_method_not_allowed
            ):
                try:
                    response = self._run_write(request, handler, *args, **kwargs)
                finally:
                    replicas.wrote(request)  # its key reads no replica that lacks this write
            elif request.method in replicas.READ_METHODS:
                # Maybe on a replica (api.replicas); renders the handler's errors itself.
                response = replicas.read(self, request, handler, *args, **kwargs)
            else:
                response = handler(request, *args, **kwargs)
        except Exception as exc:
            response = self.handle_exception(exc)
        self.response = self.finalize_response(request, response, *args, **kwargs)
        return self.response

    def _v1_post_is_patch(self) -> bool:
        """v1 accepts POST on any path that has PATCH and no POST of its own (DESIGN.md 4)."""
        return hasattr(self, "patch") and not hasattr(self, "post")

    def _rendered(self, request, response, *args, **kwargs):
        response = self.finalize_response(request, response, *args, **kwargs)
        if hasattr(response, "render"):  # an error from handle_exception is already rendered
            response.render()
        return response

    def _run_write(self, request, handler, *args, **kwargs):
        """One operation (`core.operations`) with the request's idempotency record in its
        transaction. A refusal the record stores (422, 409) commits with it, together with
        what the refusal keeps; any other refusal (a 404) rolls the whole request back, its
        claim included, and what it keeps commits on its own right after."""
        key = idempotency.parse_key(request, required=request.version == V2)
        # Parse first: a malformed body (400) or media type (415) is rejected before any record.
        request_fingerprint = (
            None
            if key is None
            else idempotency.fingerprint(request.method, request.path, request.data)
        )
        with operations.operation(Actor(api_key=request.auth)) as operation:
            claimed = None
            if key is not None:
                claimed = idempotency.claim(
                    institution_id=self.institution.id,
                    key=key,
                    fingerprint=request_fingerprint,
                    method=request.method,
                    path=request.path,
                )
                if isinstance(claimed, IdempotencyRecord):
                    return idempotency.replay(claimed, request_fingerprint, request)
            try:
                with operation.attempt(answered=idempotency.is_stored_error):
                    response = self._rendered(
                        request, handler(request, *args, **kwargs), *args, **kwargs
                    )
            except TXError as error:
                if not idempotency.is_stored_error(error):
                    raise
                response = self._rendered(request, self.handle_exception(error), *args, **kwargs)
            if claimed is None:  # v1 without a key: still one atomic write, nothing stored
                return response
            if idempotency.is_stored_status(response.status_code):
                idempotency.store(claimed, response, request)
            else:
                transaction.set_rollback(True)
            return response
