"""The committed OpenAPI files equal what the code generates, and each is a valid OpenAPI 3 document
of its own version only. Regenerate with:

    .venv/bin/python manage.py spectacular --api-version v2 --file openapi/v2.yaml --validate
"""

import io
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from openapi_spec_validator import validate

from api.schema import UUID4_PATTERN

ROOT = Path(__file__).resolve().parent.parent
WRITE_METHODS = {"post", "patch"}


def generated(version: str) -> str:
    out = io.StringIO()
    call_command(
        "spectacular", "--api-version", version, "--validate", "--fail-on-warn", stdout=out
    )
    return out.getvalue()


@pytest.fixture(scope="module", params=["v1", "v2"])
def schema(request, django_db_blocker):
    with django_db_blocker.unblock():
        text = generated(request.param)
    return request.param, text


def test_committed_file_matches_the_code(schema):
    version, text = schema
    committed = (ROOT / "openapi" / f"{version}.yaml").read_text()
    assert committed == text, (
        f"openapi/{version}.yaml is stale: regenerate it with manage.py spectacular "
        f"--api-version {version} --file openapi/{version}.yaml --validate"
    )


def test_is_valid_openapi_3_of_one_version(schema):
    version, text = schema
    document = yaml.safe_load(text)
    validate(document)
    assert document["openapi"].startswith("3.")
    assert document["paths"], "no operations documented"
    assert all(path.startswith(f"/TX/{version}/") for path in document["paths"])
    assert document["components"]["securitySchemes"]["ApiKeyAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
    }


def test_every_operation_documents_auth_errors_and_idempotency(schema):
    version, text = schema
    document = yaml.safe_load(text)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert operation["security"] == [{"ApiKeyAuth": []}], where
            assert {"400", "401", "403", "404", "429", "500"} <= set(operation["responses"]), where
            headers = {
                parameter["name"]: parameter
                for parameter in operation.get("parameters", [])
                if parameter["in"] == "header"
            }
            if method in WRITE_METHODS:
                assert {"409", "413", "415", "422"} <= set(operation["responses"]), where
                assert headers["Idempotency-Key"].get("required", False) is (version == "v2"), where
                # A pattern, not `format: uuid` (api/schema.py says why).
                assert headers["Idempotency-Key"]["schema"] == {
                    "type": "string",
                    "pattern": UUID4_PATTERN,
                }, where
            else:
                assert "Idempotency-Key" not in headers, where
                # Reads may come from a replica (docs/read-replicas.md): the way to ask for the
                # primary, and the answer's header saying which one read.
                assert headers["X-TX-Consistency"]["schema"]["enum"] == ["strong"], where
                answer_headers = operation["responses"]["200"].get("headers", {})
                assert "X-TX-Read-From" in answer_headers, where


def test_request_bodies_reject_unlisted_fields(schema):
    _, text = schema
    components = yaml.safe_load(text)["components"]["schemas"]
    requests = {name: c for name, c in components.items() if name.endswith("Request")}
    assert requests
    assert all(c["additionalProperties"] is False for c in requests.values())


def test_v1_documents_post_as_an_alias_of_every_patch(schema):
    version, text = schema
    for path, operations in yaml.safe_load(text)["paths"].items():
        if "patch" not in operations:
            continue
        if version == "v1":
            assert operations["post"]["requestBody"] == operations["patch"]["requestBody"], path
            assert operations["post"]["responses"] == operations["patch"]["responses"], path
        else:
            assert "post" not in operations, path


class Yaml11Loader(yaml.SafeLoader):
    """A reader that, like several YAML 1.1 readers, takes a plain scalar of digits with a
    leading zero (`008`) for an integer: PyYAML's own reader does not."""


Yaml11Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9][0-9_]*$"), list("-+0123456789")
)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_yaml_1_1_reader_reads_the_committed_document_as_written(version):
    """Every string that looks like a number is quoted, so no reader turns the country code
    "008" into the integer 8 (a client generator then dropped seven request schemas)."""
    text = (ROOT / "openapi" / f"{version}.yaml").read_text()
    assert "'008'" in text
    # A SafeLoader subclass: it builds no object but plain data.
    assert yaml.load(text, Loader=Yaml11Loader) == yaml.safe_load(text)  # noqa: S506
