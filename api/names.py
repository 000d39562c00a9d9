"""The API's names for the domain's (docs/design.md section 4; docs/api-contract.md, "Names").

Services and selectors speak the domain's names (`account_id`, `delivery_address`); the API
speaks camelCase, and v1 renames a few of v2's fields. This module is the one place that maps
the first onto the second:

- `API_NAMES`: the domain names whose API name is not their camelCase (both versions);
- `V1_RENAMES`: every field v1 names differently from v2, by the object that has it; v1's
  serializers are made from it (`v1_twin`) and a test holds it to `openapi/v1.yaml`;
- `OBJECT_NAMES`: the few fields whose API name depends on the object that has them (a
  product's id is its `rid`; a customer's country is `countryId` in both versions);
- `api_path`: a field path of the domain in a version's names. The error renderer
  (`api.errors.error_response`) passes the `details` keys of every error a service raises
  through it; a name already in camelCase is its own API name, so errors raised by the API
  layer in the API's names render unchanged;
- `api_data`: stored data in the API's names (event data, a monitoring alert's evidence).
  Services store it in the domain's names; data stored before they did is in the API's
  already and renders as it was stored, byte for byte (docs/events.md, "Names").
"""

import copy

from api.versions import V1, V2

# Domain name -> API name, where the API's is not the camelCase of the domain's.
API_NAMES = {
    # A card's limits are `limits.perTransaction` etc. in the API (`cards.apis.serializers`).
    "limit_per_transaction": "perTransaction",
    "limit_daily": "daily",
    "limit_monthly": "monthly",
    "limit_daily_cash": "dailyCash",
    # The API names products by their "rid" (resource id): a card's product, an account's.
    "card_product_id": "cardProductRid",
    "product_id": "productRid",
}

# Domain name -> API name for the fields of one kind of object (an event's `objectType`), where
# the API's is neither API_NAMES' nor the camelCase: in that object's event data, at any depth.
OBJECT_NAMES: dict[str, dict[str, str]] = {
    # A product's snapshot (`product.*` events) names its id `rid`, as `GET /products/*` does.
    "product": {"id": "rid"},
    # A customer's country is a numeric code named `countryId` in both versions (an address's
    # is `countryCode` in v2: V1_RENAMES).
    "customer": {"country_code": "countryId"},
}

# Stored data whose value is the client's own, rendered exactly as given (docs/metadata.md).
CLIENT_DATA = frozenset({"metadata"})
# Stored data whose value is a list of field paths (domain names): rendered as API names, sorted.
FIELD_LISTS = frozenset({"changed_fields"})

# v1's renames (v2 name -> v1 name), by the v2 object (OpenAPI component) that has the field.
V1_RENAMES: dict[str, dict[str, str]] = {
    "Address": {"countryCode": "countryId"},
}

# The fields (v2 names) that hold one of those objects, wherever they appear in a body: an error
# path through them (`deliveryAddress.countryCode`) names a field of that object.
OBJECT_FIELDS = {"address": "Address", "deliveryAddress": "Address"}


def camel(name: str) -> str:
    """`account_id` -> `accountId`; a name without `_` (already camelCase) is left as it is."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def api_path(path: str, version: str, *, names: dict[str, str] | None = None) -> str:
    """A dotted field path in the domain's names (`primary_card.delivery_address.country_code`)
    in `version`'s names (v2 `primaryCard.deliveryAddress.countryCode`, v1
    `primaryCard.deliveryAddress.countryId`); `names`: one object's `OBJECT_NAMES`."""
    names = names or {}
    parts = []
    holder = None
    for segment in path.split("."):
        name = names.get(segment) or API_NAMES.get(segment) or camel(segment)
        renamed = V1_RENAMES.get(holder, {}).get(name, name) if version == V1 else name
        holder = OBJECT_FIELDS.get(name)
        parts.append(renamed)
    return ".".join(parts)


def api_details(details, version: str):
    """Error `details` raised in the domain's names, keyed by `version`'s names (the values are
    data and stay as they are, but for an inner error's own `details`, as a batch item's in
    `batch_item_failed`: keyed the same way). Anything but a dict is returned unchanged."""
    if not isinstance(details, dict):
        return details
    return {
        api_path(key, version): api_details(value, version) if key == "details" else value
        for key, value in details.items()
    }


def api_data(data, *, object_type: str | None = None, stored: bool = True):
    """Data the domain stores in its names (an event's `data` about an `object_type`, a
    monitoring alert's evidence, a decline's details) in the API's names, the same in both
    versions: every key through `api_path` (the object's OBJECT_NAMES first), the field paths
    of a FIELD_LISTS value too (then sorted), the client's own data (CLIENT_DATA) as it is.

    `stored`: the data was read back from the database, so its keys come out in the order
    PostgreSQL's jsonb keeps them (shorter first, then by their bytes), the order such data
    has always rendered in; data stored in the API's names, before the domain spoke its own,
    renders as it did, byte for byte. Otherwise the keys keep the order they have."""
    return _api_value(data, OBJECT_NAMES.get(object_type, {}), stored)


def _api_value(value, names: dict[str, str], stored: bool):
    if isinstance(value, list):
        return [_api_value(item, names, stored) for item in value]
    if not isinstance(value, dict):
        return value
    rendered = {}
    for key, item in value.items():
        if key in CLIENT_DATA:
            rendered[key] = item
        elif key in FIELD_LISTS:
            rendered[api_path(key, V2)] = sorted(api_path(path, V2, names=names) for path in item)
        else:
            rendered[api_path(key, V2, names=names)] = _api_value(item, names, stored)
    if not stored:
        return rendered
    return {key: rendered[key] for key in sorted(rendered, key=_jsonb_key)}


def _jsonb_key(key: str) -> tuple[int, bytes]:
    return len(key.encode()), key.encode()


def v1_twin(serializer_class, *, object_name: str):
    """The v1 serializer of a v2 serializer of `object_name` (a key of V1_RENAMES): named
    `V1<its name>` (the v1 schema's component), its renamed fields in the same places."""
    renames = V1_RENAMES[object_name]
    declared = serializer_class._declared_fields
    attrs = {"__module__": serializer_class.__module__}
    for v2_name, v1_name in renames.items():
        attrs[v2_name] = None
        attrs[v1_name] = copy.deepcopy(declared[v2_name])
    twin = type(f"V1{serializer_class.__name__}", (serializer_class,), attrs)
    twin._declared_fields = {
        renames.get(name, name): twin._declared_fields[renames.get(name, name)] for name in declared
    }
    return twin
