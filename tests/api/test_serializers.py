"""`api.serializers.Serializer`: every serializer of the API derives from it, and its one-level
copy of the declared fields keeps each instance's fields its own."""

import threading

from django.urls import get_resolver
from rest_framework import serializers

from api.serializers import Serializer, StrictCharField, StrictSerializer
from tests.test_imports import LAYERS
from transfers.apis import BatchCreate, TransferCreate


def _first_party_serializers() -> list[type]:
    """Every serializer class the project's apps define: the URLconf imports every view."""
    get_resolver().url_patterns  # noqa: B018  (imports config.urls and so every API module)
    ours = set(LAYERS)
    found, pending = [], list(serializers.Serializer.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in ours:
            found.append(cls)
    return found


def test_every_serializer_of_the_project_derives_from_the_api_base():
    found = _first_party_serializers()
    assert TransferCreate in found  # the walk sees the API's serializers
    outside = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in found
        if not issubclass(cls, Serializer) and cls is not Serializer
    )
    assert outside == []


class _Item(StrictSerializer):
    name = StrictCharField(max_length=5)
    tags = serializers.ListField(child=StrictCharField(max_length=3), required=False)


class _Outer(StrictSerializer):
    item = _Item()
    items = _Item(many=True, required=False)
    note = StrictCharField(required=False)


def test_each_instance_binds_fields_of_its_own_and_the_declared_ones_stay_unbound():
    first, second = _Outer(data={}), _Outer(data={})
    for name in ("item", "items", "note"):
        assert first.fields[name] is not second.fields[name]
        assert first.fields[name].parent is first
        assert second.fields[name].parent is second
    # A nested serializer builds fields of its own, bound to it; a list of them, its own child.
    assert first.fields["item"].fields["name"] is not second.fields["item"].fields["name"]
    assert first.fields["item"].fields["name"].parent is first.fields["item"]
    assert first.fields["items"].child is not second.fields["items"].child
    assert first.fields["items"].child.parent is first.fields["items"]
    assert "fields" not in _Outer._declared_fields["item"].__dict__  # never built
    # Composite fields are deep copies: their children are bound to their own parent.
    assert first.fields["item"].fields["tags"] is not second.fields["item"].fields["tags"]
    assert first.fields["item"].fields["tags"].child.parent is first.fields["item"].fields["tags"]
    for field in _Outer._declared_fields.values():
        assert field.parent is None and field.field_name is None
    assert _Item._declared_fields["name"].source is None


def test_the_copies_validate_as_drf_does_and_report_errors_per_instance():
    good = _Outer(data={"item": {"name": "abc", "tags": ["x"]}, "note": "n"})
    bad = _Outer(data={"item": {"name": "toolong", "tags": ["long"]}, "items": [{"name": 1}]})
    assert good.is_valid(), good.errors
    assert good.validated_data == {"item": {"name": "abc", "tags": ["x"]}, "note": "n"}
    assert not bad.is_valid()
    assert set(bad.errors) == {"item", "items"}
    assert set(bad.errors["item"]) == {"name", "tags"}
    # The first instance's result is untouched by the second's errors.
    assert good.errors == {}


def test_concurrent_instances_in_threads_do_not_share_validation_state():
    bodies = [
        {"mode": "atomic", "transfers": [{"amount": 1}]},
        {"mode": "independent", "transfers": []},
        {"mode": "bogus"},
    ]
    errors: list[dict] = []
    barrier = threading.Barrier(len(bodies) * 4)

    def parse(body):
        barrier.wait()
        for _ in range(50):
            serializer = BatchCreate(data=body)
            serializer.is_valid()
            errors.append((str(body), sorted(serializer.errors)))

    threads = [threading.Thread(target=parse, args=(body,)) for body in bodies * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    by_body = {}
    for body, fields in errors:
        by_body.setdefault(body, set()).add(tuple(fields))
    assert all(len(outcomes) == 1 for outcomes in by_body.values()), by_body


def test_a_lone_surrogate_is_refused_by_the_text_rule_not_drfs_second_walk():
    """DRF's surrogate validator is dropped from every text field: `check_text` refuses a lone
    surrogate first (it is in FORBIDDEN_CHARACTERS), whether the value came through the JSON
    parser or not."""
    from rest_framework.validators import ProhibitSurrogateCharactersValidator

    from api.serializers import StrictEmailField

    for field in (StrictCharField(), StrictEmailField()):
        assert not any(
            isinstance(v, ProhibitSurrogateCharactersValidator) for v in field.validators
        )
        for value in ("ada\ud800", "\udc00ada@example.com"):
            try:
                field.run_validation(value)
            except serializers.ValidationError as error:
                assert error.detail[0].code == "control_character"
            else:
                raise AssertionError(f"{value!r} was accepted")


def test_the_fast_copy_of_a_field_is_copy_copy_for_every_field_of_the_project():
    """`api.serializers._copy` relies on what `copy.copy` does for a DRF field: a new instance
    of its class with the same `__dict__`. Every plain field any serializer of the project
    declares is held to it, so a field class with a `__copy__`, slots or a reduce of its own
    would fail here rather than be copied wrong."""
    import copy

    from api.serializers import _COMPOSITE_FIELDS, _copy

    checked = 0
    for cls in _first_party_serializers():
        for name, field in cls._declared_fields.items():
            if isinstance(field, _COMPOSITE_FIELDS):
                continue
            kind = type(field)
            assert getattr(kind, "__copy__", None) is None, (cls, name)
            assert not any("__slots__" in vars(base) for base in kind.__mro__[:-1]), (cls, name)
            assert kind.__reduce_ex__ is object.__reduce_ex__, (cls, name)
            fast, generic = _copy(field), copy.copy(field)
            assert type(fast) is type(generic) is kind
            assert fast is not field
            assert vars(fast) == vars(generic) == vars(field)
            checked += 1
    assert checked > 100  # the walk saw the project's fields


def test_a_nested_serializer_whose_fields_were_built_is_copied_whole():
    class Inner(StrictSerializer):
        name = StrictCharField(max_length=5)

    class Outer(StrictSerializer):
        inner = Inner()

    declared = Outer._declared_fields["inner"]
    declared.fields  # noqa: B018  (someone built the declared serializer's fields)
    first, second = Outer(data={}), Outer(data={})
    assert first.fields["inner"].fields is not declared.fields
    assert first.fields["inner"].fields["name"] is not second.fields["inner"].fields["name"]
    assert first.fields["inner"].fields["name"].parent is first.fields["inner"]
