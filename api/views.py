"""`TXView`: the base of every API view. One place for the behaviour both versions share.

DRF's `initial()` authenticates, checks the allowlist and scopes, and rate-limits; then every
POST and PATCH runs as one operation (`core.operations`: a durable transaction, the key as the
actor, what a refusal keeps) together with its idempotency record (`api.idempotency`). Views
only parse, call one service or selector, and hand a version-neutral resource dict to
`respond`/`created`/`respond_list`, which apply the version's adapter.
"""

from django.db import transaction
from django.http import HttpResponseBase
from rest_framework.response import Response
from rest_framework.views import APIView

from api import idempotency, replicas
from api.context import context_of
from api.models import IdempotencyRecord
from api.pagination import paginate
from api.versions import V1, V2, created_status, list_body, success_body, version_of_path
from core import operations
from core.actors import Actor, actor_enter, actor_exit
from core.exceptions import IdempotencyKeyInUse, TXError


class Continued(Response):
    """What a write handler returns when its answer must wait for work that runs with no
    database transaction open (a card authorization asks its program: docs/decisioning.md).
    Its operation commits first, with the idempotency record and no answer (the record names
    `resource_id`); then `outside()` runs with nothing open, and `inside(result)`, in a second
    operation, finishes the work and returns the response, stored in the record in that
    operation's transaction. A retry of the key before the answer is stored resumes from
    `resource_id` (`TXView.resume`)."""

    def __init__(self, resource_id: str, *, outside, inside):
        super().__init__()
        self.resource_id = resource_id
        self.outside = outside
        self.inside = inside


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
        """v1 accepts POST on any path that has PATCH and no POST of its own (docs/design.md
        section 4)."""
        return hasattr(self, "patch") and not hasattr(self, "post")

    def _rendered(self, request, response, *args, **kwargs):
        response = self.finalize_response(request, response, *args, **kwargs)
        if hasattr(response, "render"):  # an error from handle_exception is already rendered
            response.render()
        return response

    def _run_write(self, request, handler, *args, **kwargs):
        """One operation (`core.operations`) with the request's idempotency record in its
        transaction, and no savepoint between them: a success commits with its stored answer.
        A refusal the record stores (422, 409) rolls the operation back whole, claim included,
        and a second transaction claims the key again and commits the refusal's answer with
        what the refusal keeps (`_answer_refusal`); any other refusal (a 404) rolls the whole
        request back, and what it keeps commits on its own right after."""
        key = idempotency.parse_key(request, required=request.version == V2)
        # Parse first: a malformed body (400) or media type (415) is rejected before any record.
        request_fingerprint = (
            None
            if key is None
            else idempotency.fingerprint(request.method, request.path, request.data)
        )
        actor = Actor(api_key=request.auth)
        handled = False  # a refusal of the claim itself (a reused key) is not the operation's
        try:
            with operations.operation(actor, answered=idempotency.is_stored_error) as operation:
                claimed = self._claim(request, key, request_fingerprint)
                if isinstance(claimed, HttpResponseBase):
                    return claimed
                handled = True
                response = handler(request, *args, **kwargs)
                if not isinstance(response, Continued):
                    response = self._rendered(request, response, *args, **kwargs)
                if isinstance(response, Continued):
                    if claimed is not None:
                        idempotency.continue_later(claimed, response.resource_id, request)
                elif claimed is None:  # v1 without a key: still one atomic write, nothing stored
                    return response
                elif idempotency.is_stored_status(response.status_code):
                    idempotency.store(claimed, response, request)
                    return response
                else:
                    transaction.set_rollback(True)
                    return response
        except TXError as error:
            if not handled or not idempotency.is_stored_error(error):
                raise
            return self._answer_refusal(
                request, operation, error, key, request_fingerprint, *args, **kwargs
            )
        return self._continue(request, claimed, response, *args, **kwargs)

    def _claim(self, request, key, request_fingerprint):
        """The key claimed in the open transaction: its record's id; the answer when the key
        holds one already (a replay, or a resumed `Continued` write); None without a key."""
        if key is None:
            return None
        claimed = idempotency.claim(
            institution_id=self.institution.id,
            key=key,
            fingerprint=request_fingerprint,
            method=request.method,
            path=request.path,
        )
        if not isinstance(claimed, IdempotencyRecord):
            return claimed
        if claimed.status_code is None:  # committed without its answer
            return self._resume(request, claimed, request_fingerprint)
        return idempotency.replay(claimed, request_fingerprint, request)

    def _answer_refusal(self, request, refused, error, key, request_fingerprint, *args, **kwargs):
        """The answer of a refused operation (`refused`, rolled back) that its key stores: in a
        transaction of its own, the key claimed again, what the refusal keeps written (it may
        answer another error: `Operation.keep`) and the answer stored. The key was free in
        between: a request with the same key that took it meanwhile answered first, and this
        one replays that answer instead (the operation's refusal, and what it keeps, are then
        that request's). Refusals are the rarer answer: the savepoint that would keep the
        claim through them cost every write request two statements."""
        with operations.operation(refused.actor):
            claimed = self._claim(request, key, request_fingerprint)
            if isinstance(claimed, HttpResponseBase):
                return claimed
            answer = refused.keep(error)
            response = self._rendered(request, self.handle_exception(answer), *args, **kwargs)
            if claimed is not None:
                idempotency.store(claimed, response, request)
        return response

    def _continue(self, request, claimed, continued: Continued, *args, **kwargs):
        """The rest of a `Continued` write, its first operation committed."""
        result = continued.outside()
        with operations.operation(Actor(api_key=request.auth)):
            response = self._rendered(request, continued.inside(result), *args, **kwargs)
            if claimed is not None and not idempotency.store(claimed, response, request):
                # A retry resumed it meanwhile and stored its answer: answer the same.
                stored = IdempotencyRecord.objects.get(pk=claimed)
                response = idempotency.replay(stored, stored.fingerprint, request)
        return response

    def _resume(self, request, record: IdempotencyRecord, request_fingerprint: str):
        """A retry of a `Continued` write whose answer is not stored (still running, or its
        process stopped): the same request, then `resume` renders its object as it stands, and
        that answer is stored (the first to store wins; the others replay it)."""
        idempotency.check_same_request(record, request_fingerprint, request)
        response = self._rendered(request, self.resume(request, record.resource_id))
        if not idempotency.store(record.pk, response, request):
            record = IdempotencyRecord.objects.get(pk=record.pk)
            return idempotency.replay(record, request_fingerprint, request)
        return response

    def resume(self, request, resource_id: str) -> Response:
        """The answer of a `Continued` write of this view whose first operation created
        `resource_id`, as it stands now; raise `IdempotencyKeyInUse` (409) while it is not
        finished. Only views whose handlers return `Continued` have any to resume."""
        raise IdempotencyKeyInUse()
