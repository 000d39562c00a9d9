"""OpenAPI helpers: the `ApiKeyAuth` scheme, envelopes, errors and headers per version.

`document(...)` returns the `extend_schema` decorators that describe one operation in both
versions: the same request and resource serializers, wrapped in each version's body shape
(`api.versions`), with the error responses the operation can answer. `TXAutoSchema` adds to
every operation the scope it requires, read from the view the way `api.auth` enforces it.
"""

import copy
import re

from drf_spectacular import renderers
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from api.serializers import MetaSerializer, Serializer
from api.versions import V1, V2


class ApiKeyAuthScheme(OpenApiAuthenticationExtension):
    target_class = "api.auth.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "x-api-key"}


class TXAutoSchema(AutoSchema):
    """Every operation says which scope it requires: `x-required-scope` and a sentence of its
    description, from `api.auth.required_scope` (the check HasApiKey makes), so the documents
    cannot disagree with the code. What a body adds (a view's `body_scopes`: a full PAN, credit)
    is said too: a sentence each, and `x-body-required-scopes` ([{scope, when}])."""

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        from api.auth import required_scope
        from api.views import TXView

        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None or not isinstance(self.view, TXView):
            return operation  # the schema and docs pages are not API operations: no scope
        scope = required_scope(self.view, self.method)
        if scope is None:  # refused to every key: a view without a scope is not an operation
            raise ValueError(f"{self.method} {path} names no scope (write_scope)")
        operation["x-required-scope"] = scope
        sentences = [f"Requires scope `{scope}`."]
        body_scopes = getattr(self.view, "body_scopes", ())
        if body_scopes and self.method not in ("GET", "HEAD"):
            operation["x-body-required-scopes"] = [
                {"scope": body_scope.scope, "when": body_scope.when} for body_scope in body_scopes
            ]
            sentences += [
                f"Also requires `{body_scope.scope}` with {body_scope.when}."
                for body_scope in body_scopes
            ]
        description = operation.pop("description", "").strip()
        description = "\n\n".join([*([description] if description else []), " ".join(sentences)])
        # The description right after the operationId, where drf-spectacular puts it.
        ordered = {}
        for name, value in operation.items():
            ordered[name] = value
            if name == "operationId":
                ordered["description"] = description
        return ordered


UUID4_PATTERN = (
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
)
RELEASES = {V1: "1.1.3", V2: "2.0.0"}


def finalize(result, generator, request, public):
    """drf-spectacular post-processing hook: `info.version` is the version line's release, and
    request bodies say what the API enforces (a field they do not list is rejected)."""
    result["info"]["version"] = RELEASES.get(generator.api_version, result["info"]["version"])
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
    if generator.api_version == V1:
        _document_v1_post_aliases(result)
    return result


# A string a YAML 1.1 reader may take for a number when it is written plain: the country code
# "008" becomes the integer 8 for some readers (openapi-python-client then drops every schema
# holding it). PyYAML's own reader keeps it a string, so its writer leaves it plain. Telling
# the writer that such scalars read as integers makes it quote them: drf-spectacular's YAML
# renderer builds its dumper from this class on every render (also for `manage.py
# spectacular`). Only writing is affected; readers and the JSON document are unchanged.
NUMBER_LIKE = re.compile(r"^[-+]?\.?[0-9][0-9_:.]*([eE][-+]?[0-9]+)?$")
renderers.SafeDumper.add_implicit_resolver(
    "tag:yaml.org,2002:int", NUMBER_LIKE, list("-+.0123456789")
)


def _document_v1_post_aliases(result) -> None:
    """v1 answers POST on every path that has PATCH and no POST (`TXView._v1_post_is_patch`)."""
    for operations in result["paths"].values():
        if "patch" in operations and "post" not in operations:
            alias = copy.deepcopy(operations["patch"])
            alias["operationId"] = alias["operationId"].replace("_v1", "_by_post_v1")
            alias["summary"] = f"{alias.get('summary', '')} (POST alias of PATCH)".strip()
            operations["post"] = alias


class ErrorSerializer(Serializer):
    code = serializers.CharField(help_text="Stable machine-readable error code.")
    message = serializers.CharField(help_text="Human-readable explanation.")
    details = serializers.JSONField(
        required=False, help_text="Structured details, e.g. field paths to messages."
    )


class V1ErrorSerializer(Serializer):
    error = ErrorSerializer()
    meta = MetaSerializer()


_ERROR_TEXT = {
    400: "validation_error, idempotency_key_missing or idempotency_key_invalid",
    401: "authentication_failed: no, unknown, revoked or expired key",
    403: "ip_not_allowed (address outside the key's allowlist) or permission_denied (scope)",
    404: "not_found: unknown id, or one that belongs to another institution",
    405: "method_not_allowed",
    409: "idempotency_key_in_use (the same key is still running) or invalid_state_transition",
    413: "payload_too_large: body over MAX_BODY_BYTES",
    415: "unsupported_media_type: bodies must be application/json",
    422: "idempotency_key_reused (same key, different request) or a business rule",
    429: "rate_limited (see Retry-After)",
    500: "internal_error (details.tranId identifies the request for support)",
    503: "service_unavailable (see Retry-After)",
}
READ_ERRORS = (400, 401, 403, 404, 405, 429, 500, 503)
WRITE_ERRORS = (400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503)

_classes: dict[tuple, type] = {}


def _component(name: str, bases: tuple, fields: dict) -> type:
    key = (name, bases)
    if key not in _classes:
        _classes[key] = type(name, bases, {**fields, "__module__": __name__})
    return _classes[key]


def body(resource: type, version: str, *, name: str) -> type:
    """The serializer of a success body: v2 the resource + meta, v1 {data, meta}."""
    if version == V1:
        return _component(
            f"V1{name}Response",
            (Serializer,),
            {"data": resource(), "meta": MetaSerializer()},
        )
    return _component(f"{name}Response", (resource,), {"meta": MetaSerializer()})


def list_body(resource: type, version: str, *, name: str) -> type:
    prefix = "V1" if version == V1 else ""
    return _component(
        f"{prefix}{name}List",
        (Serializer,),
        {
            "data": resource(many=True),
            "nextCursor": serializers.CharField(
                allow_null=True, help_text="Pass as `cursor` to get the next page; null at the end."
            ),
            "hasMore": serializers.BooleanField(),
            "meta": MetaSerializer(),
        },
    )


def _errors(version: str, statuses) -> dict:
    error = V1ErrorSerializer if version == V1 else ErrorSerializer
    return {status: OpenApiResponse(error, description=_ERROR_TEXT[status]) for status in statuses}


def _idempotency_header(version: str) -> OpenApiParameter:
    # The pattern says UUID v4; no `format: uuid`: openapi-python-client then types the header
    # as a UUID object and hands it to httpx unconverted, and every write of such a client
    # fails with a TypeError before it is sent (tests/test_generated_client.py).
    return OpenApiParameter(
        "Idempotency-Key",
        {"type": "string", "pattern": UUID4_PATTERN},
        OpenApiParameter.HEADER,
        required=version == V2,
        description=(
            "UUID v4. The same key and body within 24 hours replays the original response "
            "(header `Idempotent-Replayed: true`); the same key with another body is 422 "
            "`idempotency_key_reused`." + ("" if version == V2 else " Optional in v1.")
        ),
    )


# Reads may be served by a read replica (api.replicas, docs/read-replicas.md).
READ_CONSISTENCY_PARAMETERS = [
    OpenApiParameter(
        "X-TX-Consistency",
        {"type": "string", "enum": ["strong"]},
        OpenApiParameter.HEADER,
        description="`strong`: read the primary database, never a read replica (which may lag "
        "by some seconds). Without it a key reads only a replica that has replayed its own last "
        "write (else the primary), so it always sees what it wrote. Only matters where the "
        "service runs with replicas.",
    ),
    OpenApiParameter(
        "X-TX-Read-From",
        {"type": "string", "enum": ["primary", "replica"]},
        OpenApiParameter.HEADER,
        response=[200],
        description="Which database answered: sent only where the service runs with read replicas.",
    ),
]


def both(serializer) -> dict:
    """The same serializer in both versions (a resource whose shape did not change)."""
    return {V1: serializer, V2: serializer}


PAGE_PARAMETERS = [
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": 100},
        description="Page size, 1 to 100 (default 20).",
    ),
    OpenApiParameter("cursor", str, description="`nextCursor` of the previous page."),
]


def document(
    *,
    name: str,
    resources: dict,
    summary: str,
    request: dict | None = None,
    created: bool = False,
    many: bool = False,
    parameters: list | None = None,
    errors=None,
    operation_id: str,
    tags: list[str],
    description: str = "",
):
    """Decorate a view method for the versions in `resources` ({"v1": cls, "v2": cls}; one key
    for an operation only one version has); `request` likewise. `parameters`: a list for every
    version, or a dict of lists by version (a query parameter only one version reads)."""
    write = request is not None
    errors = errors or (WRITE_ERRORS if write else READ_ERRORS)

    def decorate(func):
        for version in (V1, V2):
            if version not in resources:
                continue
            resource = resources[version]
            shape = list_body if many else body
            ok_status = (200 if version == V1 else 201) if created else 200
            by_version = isinstance(parameters, dict)
            params = list((parameters.get(version) if by_version else parameters) or [])
            if many:
                params += PAGE_PARAMETERS
            if write:
                params.append(_idempotency_header(version))
            else:
                params += READ_CONSISTENCY_PARAMETERS
            func = extend_schema(
                versions=[version],
                operation_id=f"{operation_id}_{version}",
                summary=summary,
                description=description,
                tags=tags,
                request=request[version] if write else None,
                parameters=params,
                responses={
                    ok_status: shape(resource, version, name=name),
                    **_errors(version, errors),
                },
            )(func)
        return func

    return decorate
