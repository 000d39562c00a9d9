"""Operators' commands (docs/design.md section 11): institutions, keys, allowlists, demo seed.

Each key a command prints is checked over HTTP, where it matters: that it authenticates, from
where, and until when.
"""

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import Account, AccountProduct
from accounts.verification import ledger_breaches
from cards.models import CardProduct
from customers.models import Customer
from institutions import scopes
from institutions.models import AllowedNetwork, ApiKey, Institution
from payments.models import AchProfile, SepaProfile
from tests.conftest import Api
from tests.factories import issue_key


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def run_json(*args) -> dict:
    output = run(*args)
    lines = output.splitlines()
    assert len(lines) == 1, output
    return json.loads(lines[0])


def status_of(secret, remote_addr="127.0.0.1", version="v2"):
    return Api(version, secret, remote_addr=remote_addr).get("/customers").status_code


# --- create_institution ------------------------------------------------------------------------


def test_create_institution_is_idempotent_by_name(db):
    first = run_json("create_institution", "--name", "Bank of Tests", "--json")
    second = run_json("create_institution", "--name", "Bank of Tests", "--json")

    assert first == {
        "institutionId": first["institutionId"],
        "name": "Bank of Tests",
        "created": True,
    }
    assert first["institutionId"].startswith("fi_")
    assert second == {**first, "created": False}
    assert Institution.objects.filter(name="Bank of Tests").count() == 1


def test_create_institution_gets_the_three_account_products(db):
    result = run_json("create_institution", "--name", "Cedi Bank", "--currency", "USD", "--json")
    run("create_institution", "--name", "Cedi Bank")
    products = AccountProduct.objects.filter(institution_id=result["institutionId"])
    assert sorted(products.values_list("code", "kind", "currency")) == [
        ("AccountPrepaidAPI", "prepaid", "USD"),
        ("CBSFinancialContractTypeAPI", "current", "USD"),
        ("GHSAccountPrepaidAPI", "prepaid", "GHS"),
    ]


def test_create_institution_time_zone_and_card_products(db):
    result = run_json(
        "create_institution", "--name", "Accra Bank", "--time-zone", "Africa/Accra", "--json"
    )
    institution = Institution.objects.get(pk=result["institutionId"])
    assert institution.time_zone == "Africa/Accra"
    assert sorted(
        CardProduct.objects.filter(institution=institution).values_list("code", "kind")
    ) == [
        ("DEBIT_STANDARD", "debit"),
        ("PREPAID_STANDARD", "prepaid"),
        ("PREPAID_VIRTUAL", "prepaid"),
    ]
    default = run_json("create_institution", "--name", "UTC Bank", "--json")
    assert Institution.objects.get(pk=default["institutionId"]).time_zone == "UTC"


def test_create_institution_plain_output(db):
    output = run("create_institution", "--name", "Plain Bank")
    institution = Institution.objects.get(name="Plain Bank")
    assert output == f"Created institution {institution.id} (Plain Bank)\n"
    assert run("create_institution", "--name", "Plain Bank") == (
        f"Already exists: institution {institution.id} (Plain Bank)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "  "], "An institution needs a name."),
        (["--name", "X", "--currency", "XXZ"], "currency must be an ISO 4217 alpha-3 code"),
        (["--name", "X", "--time-zone", "Mars/Olympus"], "time zone must be an IANA name"),
    ],
)
def test_create_institution_rejects_bad_input(db, args, message):
    with pytest.raises(CommandError, match=message):
        run("create_institution", *args)
    assert Institution.objects.count() == 0


# --- create_api_key ----------------------------------------------------------------------------


@pytest.mark.parametrize("reference", ["id", "name"])
def test_create_api_key_json_and_it_authenticates(institution, reference):
    ref = institution.id if reference == "id" else institution.name
    result = run_json(
        "create_api_key",
        "--institution",
        ref,
        "--allow",
        "127.0.0.1/32",
        "--allow",
        "2001:db8::/32",
        "--role",
        "readonly",
        "--scope",
        "cards:sensitive",
        "--json",
    )
    assert set(result) == {"institutionId", "keyId", "apiKey"}
    assert result["institutionId"] == institution.id

    api_key = ApiKey.objects.get(id=result["keyId"])
    assert api_key.institution_id == institution.id
    assert api_key.scopes == ["cards:sensitive", "read"]
    assert sorted(api_key.allowed_networks.values_list("cidr", flat=True)) == [
        "127.0.0.1/32",
        "2001:db8::/32",
    ]
    # Only a hash is stored: the printed secret is nowhere in the row.
    assert result["apiKey"].startswith(f"tx_{api_key.prefix}_")
    secret_part = result["apiKey"].split("_", 2)[2]
    assert secret_part not in api_key.secret_hash

    assert status_of(result["apiKey"]) == 200
    assert status_of(result["apiKey"], remote_addr="2001:db8:1::1") == 200
    assert status_of(result["apiKey"], remote_addr="10.0.0.1") == 403


def test_create_api_key_plain_output_prints_the_key_once(institution):
    output = run(
        "create_api_key", "--institution", institution.id, "--allow", "127.0.0.1", "--scope", "read"
    )
    api_key = ApiKey.objects.get()
    lines = output.splitlines()
    assert lines[:4] == [
        f"Key {api_key.id} for {institution.name} ({institution.id})",
        "Allowed from: 127.0.0.1",
        "Scopes: read",
        "API key (shown once, store it now):",
    ]
    assert len(lines) == 5
    assert status_of(lines[4]) == 200
    assert list(api_key.allowed_networks.values_list("cidr", flat=True)) == ["127.0.0.1/32"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--allow"),
        (["--allow", "10.0.0.300/8"], "'10.0.0.300/8' is not an IPv4 or IPv6 address or CIDR"),
        (["--allow", "10.0.0.0/8", "--allow", "bogus"], "'bogus' is not an IPv4 or IPv6"),
        (["--allow", "2001:db8::/129"], "is not an IPv4 or IPv6"),
        (["--allow", "10.0.0.0/8", "--scope", "cards:everything"], "Unknown scope"),
        (["--allow", "10.0.0.0/8", "--role", "admin"], "invalid choice: 'admin'"),
        # No default: least privilege is chosen, never implied.
        (["--allow", "10.0.0.0/8"], "A key needs a role or at least one scope"),
    ],
)
def test_create_api_key_rejects_bad_input_and_creates_nothing(institution, args, message):
    with pytest.raises(CommandError, match=message):
        run("create_api_key", "--institution", institution.id, *args)
    assert ApiKey.objects.count() == 0
    assert AllowedNetwork.objects.count() == 0


def test_create_api_key_for_unknown_institution(db):
    with pytest.raises(CommandError, match="No institution with id or name 'fi_nope'"):
        run(
            "create_api_key",
            "--institution",
            "fi_nope",
            "--allow",
            "127.0.0.1/32",
            "--role",
            "full",
        )
    assert ApiKey.objects.count() == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--role", "full"], scopes.ROLES["full"]),
        (["--role", "readonly"], ["read"]),
        (["--role", "network"], ["network", "read"]),
        (
            ["--role", "network", "--scope", "cards:sensitive"],
            ["cards:sensitive", "network", "read"],
        ),
        (["--role", "full", "--scope", "read"], scopes.ROLES["full"]),  # no repeats
        (["--scope", "money:write", "--scope", "read"], ["money:write", "read"]),
    ],
)
def test_create_api_key_role_and_scopes(institution, args, expected):
    result = run_json(
        "create_api_key",
        "--institution",
        institution.id,
        "--allow",
        "127.0.0.1/32",
        *args,
        "--json",
    )
    assert ApiKey.objects.get(id=result["keyId"]).scopes == sorted(expected)


def test_create_api_key_full_role_is_every_scope_but_network_sensitive_and_the_rails(institution):
    result = run_json(
        "create_api_key", "--institution", institution.id, "--allow", "127.0.0.1/32", "--role",
        "full", "--json",
    )  # fmt: skip
    granted = ApiKey.objects.get(id=result["keyId"]).scopes
    assert sorted(set(scopes.ALL) - set(granted)) == [
        "bank",
        "cards:sensitive",
        "network",
        "payments:write",
    ]
    api = Api("v2", result["apiKey"])
    # Over HTTP: full reads and writes, but neither authorizes, reads full card details, sends
    # money to other banks nor plays the bank.
    assert api.get("/customers").status_code == 200
    assert api.post("/customers", {}).status_code == 400  # allowed in: the body is refused
    for path in ("/card-authorizations", "/card-lookups", "/payment-orders", "/rail-files"):
        refused = api.post(path, {})
        assert refused.status_code == 403
        assert refused.json()["code"] == "permission_denied"


# --- revoke_api_key / rotate_api_key -----------------------------------------------------------


@pytest.mark.parametrize("reference", ["id", "prefix"])
def test_revoke_api_key(version, key, reference):
    api_key, secret = key
    assert status_of(secret, version=version) == 200
    output = run("revoke_api_key", api_key.id if reference == "id" else api_key.prefix)
    api_key.refresh_from_db()
    assert output == f"Revoked {api_key.id} at {api_key.revoked_at.isoformat()}\n"
    assert api_key.revoked_by == "manage.py revoke_api_key"
    assert status_of(secret, version=version) == 401
    # Revoking again changes nothing.
    revoked_at = api_key.revoked_at
    run("revoke_api_key", api_key.id)
    api_key.refresh_from_db()
    assert api_key.revoked_at == revoked_at


def test_revoke_unknown_key(db):
    with pytest.raises(CommandError, match="No API key with id or prefix 'key_nope'"):
        run("revoke_api_key", "key_nope")


def test_rotate_api_key(version, institution):
    old, old_secret = issue_key(
        institution, allow=("127.0.0.1/32", "::1/128"), scopes=("read", "cards:sensitive")
    )
    result = run_json("rotate_api_key", old.id, "--json")
    old.refresh_from_db()

    assert set(result) == {
        "institutionId",
        "keyId",
        "apiKey",
        "keyExpiresAt",
        "oldKeyId",
        "oldKeyExpiresAt",
    }
    assert result["keyExpiresAt"] is None  # the old key had no expiry, nor has its successor
    assert result["oldKeyId"] == old.id
    assert result["institutionId"] == institution.id
    assert result["oldKeyExpiresAt"] == old.expires_at.isoformat()
    assert timedelta(hours=23, minutes=59) < old.expires_at - timezone.now() <= timedelta(hours=24)
    new = ApiKey.objects.get(id=result["keyId"])
    assert old.replaced_by_id == new.id
    assert new.scopes == ["cards:sensitive", "read"]
    assert sorted(new.allowed_networks.values_list("cidr", flat=True)) == [
        "127.0.0.1/32",
        "::1/128",
    ]

    # Grace period: both keys work.
    assert status_of(result["apiKey"], version=version) == 200
    assert status_of(old_secret, version=version) == 200
    assert status_of(result["apiKey"], remote_addr="::1", version=version) == 200
    # After it: only the new one.
    ApiKey.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert status_of(old_secret, version=version) == 401
    assert status_of(result["apiKey"], version=version) == 200


def test_rotate_with_zero_grace_expires_the_old_key_at_once(key):
    old, old_secret = key
    result = run_json("rotate_api_key", old.id, "--grace-hours", "0", "--json")
    assert status_of(old_secret) == 401
    assert status_of(result["apiKey"]) == 200


def test_rotate_keeps_the_expiry_of_a_time_boxed_key(version, key):
    old, old_secret = key
    ends = timezone.now() + timedelta(days=10)
    ApiKey.objects.filter(pk=old.pk).update(expires_at=ends)

    result = run_json("rotate_api_key", old.id, "--json")

    new = ApiKey.objects.get(id=result["keyId"])
    assert new.expires_at == ends
    assert result["keyExpiresAt"] == ends.isoformat()
    assert status_of(result["apiKey"], version=version) == 200
    # Rotation changes the secret, not how long access lasts: at the old end, the new key ends.
    ApiKey.objects.filter(pk=new.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert status_of(result["apiKey"], version=version) == 401


def test_rotate_a_key_ending_within_the_grace_period(key):
    old, _ = key
    ends = timezone.now() + timedelta(hours=2)
    ApiKey.objects.filter(pk=old.pk).update(expires_at=ends)

    result = run_json("rotate_api_key", old.id, "--grace-hours", "24", "--json")

    old.refresh_from_db()
    assert old.expires_at == ends  # the grace period never lengthens a key's life
    assert ApiKey.objects.get(id=result["keyId"]).expires_at == ends


def test_rotate_now_revokes_the_old_key_at_once(version, institution):
    old, old_secret = issue_key(institution, scopes=("read", "cards:sensitive"))
    ends = timezone.now() + timedelta(days=3)
    ApiKey.objects.filter(pk=old.pk).update(expires_at=ends)
    assert status_of(old_secret, version=version) == 200

    result = run_json("rotate_api_key", old.prefix, "--now", "--json")

    old.refresh_from_db()
    new = ApiKey.objects.get(id=result["keyId"])
    assert result == {
        "institutionId": institution.id,
        "keyId": new.id,
        "apiKey": result["apiKey"],
        "keyExpiresAt": ends.isoformat(),
        "oldKeyId": old.id,
        "oldKeyRevokedAt": old.revoked_at.isoformat(),
    }
    assert old.revoked_by == "manage.py rotate_api_key"
    assert old.replaced_by_id == new.id
    assert old.expires_at == ends  # revoked, its recorded expiry untouched
    assert new.expires_at == ends
    assert new.scopes == ["cards:sensitive", "read"]
    assert status_of(old_secret, version=version) == 401
    assert status_of(result["apiKey"], version=version) == 200


def test_rotate_now_text_output(key):
    old, old_secret = key
    output = run("rotate_api_key", old.id, "--now")
    old.refresh_from_db()
    lines = output.splitlines()
    assert lines[0] == (
        f"New key {old.replaced_by_id} (does not expire); "
        f"{old.id} revoked at {old.revoked_at.isoformat()}"
    )
    assert lines[1] == "API key (shown once, store it now):"
    assert status_of(lines[2]) == 200
    assert status_of(old_secret) == 401


def test_rotate_now_and_grace_hours_are_exclusive(key):
    old, old_secret = key
    count = ApiKey.objects.count()
    with pytest.raises(CommandError, match="not allowed with argument"):
        run("rotate_api_key", old.id, "--now", "--grace-hours", "2")
    assert ApiKey.objects.count() == count
    assert status_of(old_secret) == 200


@pytest.mark.parametrize(
    ("prepare", "message"),
    [
        ("rotated", "This key was already rotated to"),
        ("revoked", "This key is revoked or expired"),
    ],
)
def test_rotate_refuses_rotated_or_revoked_keys(key, prepare, message):
    api_key, _ = key
    run("rotate_api_key" if prepare == "rotated" else "revoke_api_key", api_key.id)
    count = ApiKey.objects.count()
    with pytest.raises(CommandError, match=message):
        run("rotate_api_key", api_key.id)
    assert ApiKey.objects.count() == count


# --- allowlist ---------------------------------------------------------------------------------


def test_allowlist_add_list_remove(key):
    api_key, secret = key
    assert (
        run("allowlist", "add", api_key.id, "10.0.0.7/8")
        == f"Allowed 10.0.0.0/8 for {api_key.id}\n"
    )
    assert run("allowlist", "add", api_key.prefix, "2001:DB8:ABCD::7/48") == (
        f"Allowed 2001:db8:abcd::/48 for {api_key.id}\n"
    )
    assert (
        run("allowlist", "add", api_key.id, "192.0.2.1")
        == f"Allowed 192.0.2.1/32 for {api_key.id}\n"
    )
    # Adding what is already there changes nothing.
    run("allowlist", "add", api_key.id, "10.1.2.3/8")
    assert run("allowlist", "list", api_key.id).splitlines() == [
        "10.0.0.0/8",
        "127.0.0.1/32",
        "192.0.2.1/32",
        "2001:db8:abcd::/48",
    ]
    assert status_of(secret, remote_addr="10.200.0.1") == 200
    assert status_of(secret, remote_addr="2001:db8:abcd:1::1") == 200

    assert run("allowlist", "remove", api_key.id, "10.9.9.9/8") == (
        f"Removed 10.9.9.9/8 from {api_key.id}\n"
    )
    run("allowlist", "remove", api_key.id, "2001:db8:abcd::/48")
    assert run("allowlist", "list", api_key.id).splitlines() == ["127.0.0.1/32", "192.0.2.1/32"]
    assert status_of(secret, remote_addr="10.200.0.1") == 403
    assert status_of(secret, remote_addr="2001:db8:abcd:1::1") == 403


def test_allowlist_remove_absent_cidr(key):
    api_key, _ = key
    with pytest.raises(
        CommandError, match=f"10.0.0.0/8 is not on the allowlist of key {api_key.id}"
    ):
        run("allowlist", "remove", api_key.id, "10.0.0.0/8")
    assert list(api_key.allowed_networks.values_list("cidr", flat=True)) == ["127.0.0.1/32"]


def test_allowlist_add_bad_cidr(key):
    api_key, _ = key
    with pytest.raises(CommandError, match="'not-a-cidr' is not an IPv4 or IPv6"):
        run("allowlist", "add", api_key.id, "not-a-cidr")
    assert api_key.allowed_networks.count() == 1


def test_allowlist_unknown_key(db):
    with pytest.raises(CommandError, match="No API key"):
        run("allowlist", "list", "key_nope")


def test_removing_the_last_network_locks_the_key_out(key):
    api_key, secret = key
    run("allowlist", "remove", api_key.id, "127.0.0.1/32")
    assert run("allowlist", "list", api_key.id) == ""
    assert status_of(secret) == 403


# --- purge_idempotency_keys is tested with idempotency (test_idempotency.py) -------------------

# --- seed_demo ---------------------------------------------------------------------------------


def test_seed_demo_twice(db):
    first = run_json("seed_demo", "--json")
    second = run_json("seed_demo", "--json")

    assert set(first) == set(second) == {"institutionId", "keyId", "apiKey"}
    assert first["institutionId"] == second["institutionId"]
    assert first["keyId"] != second["keyId"]
    institution = Institution.objects.get(name="TX Demo Bank")
    assert institution.id == first["institutionId"]
    assert Institution.objects.count() == 1
    assert Customer.objects.filter(institution=institution).count() == 3
    assert AccountProduct.objects.filter(institution=institution).count() == 4  # 3 + USD

    # The README sandbox's key: every scope (full, the card network's side, card details,
    # payment orders and the sponsor bank's side).
    for result in (first, second):
        assert ApiKey.objects.get(id=result["keyId"]).scopes == sorted(scopes.ALL)
    for result in (first, second):
        assert status_of(result["apiKey"]) == 200
        assert status_of(result["apiKey"], remote_addr="127.8.9.10") == 200
        assert status_of(result["apiKey"], remote_addr="::1") == 200
        assert status_of(result["apiKey"], remote_addr="10.0.0.1") == 403
    response = Api("v2", second["apiKey"]).get("/customers")
    assert len(response.json()["data"]) == 3
    # Each demo customer has one prepaid account with 1000.00 EUR, seeded once; the first
    # also a USD current account with 1000.00 to pay out of over ACH.
    every = Api("v2", second["apiKey"]).get("/accounts").json()["data"]
    accounts = [a for a in every if a["currency"] == "EUR"]
    assert (
        sorted((a["productCode"], a["balances"]["available"]) for a in accounts)
        == [("AccountPrepaidAPI", 100_000)] * 3
    )
    assert [
        (a["currency"], a["balances"]["available"]) for a in every if a["currency"] != "EUR"
    ] == [("USD", 100_000)]
    assert AchProfile.objects.filter(institution=institution).count() == 1
    # An initiation SEPA profile, its partner the simulated bank: the EUR accounts above pay
    # out over SEPA, so no account is added for it.
    sepa = SepaProfile.objects.get(institution=institution)
    assert (sepa.kind, sepa.bic, sepa.settlement_iban[:2]) == ("initiation", "TXSBDEFFXXX", "DE")
    # ... and one active virtual prepaid card on it, issued once.
    cards = Api("v2", second["apiKey"]).get("/cards").json()["data"]
    assert sorted((c["accountId"], c["status"], c["form"], c["kind"]) for c in cards) == sorted(
        (a["accountId"], "active", "virtual", "prepaid") for a in accounts
    )
    assert CardProduct.objects.filter(institution=institution).count() == 3
    assert ledger_breaches() == []


def test_seed_demo_adds_the_sepa_profile_and_a_eur_account_where_none_is_active(db):
    """A database seeded before SEPA, whose EUR accounts are no longer active: the next run
    adds the profile and a loaded EUR current account of the first customer, once."""
    run_json("seed_demo", "--json")
    institution = Institution.objects.get(name="TX Demo Bank")
    SepaProfile.objects.filter(institution=institution).delete()
    Account.objects.filter(institution=institution, currency="EUR").update(
        status=Account.Status.CLOSED
    )

    run_json("seed_demo", "--json")
    key = run_json("seed_demo", "--json")

    assert SepaProfile.objects.filter(institution=institution, kind="initiation").count() == 1
    active = Account.objects.filter(
        institution=institution,
        kind=Account.Kind.CUSTOMER,
        status=Account.Status.ACTIVE,
        currency="EUR",
    )
    assert [(a.product.code, a.customer.first_name) for a in active] == [
        (AccountProduct.Code.CURRENT, "Ada")
    ]
    balances = Api("v2", key["apiKey"]).get(f"/accounts/{active[0].pk}/balances").json()
    assert balances["available"] == 100_000
