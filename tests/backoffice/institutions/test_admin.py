"""The back office: every page renders, writes go through the services, secrets never stay."""

import re
import uuid

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.sessions.models import Session
from django.db import connection
from django.urls import reverse

from accounts.models import AccountProduct
from api.models import IdempotencyRecord
from customers.models import Customer
from events.models import Event
from events.payloads import event_payload
from institutions.models import AllowedNetwork, ApiKey, Institution
from tests.conftest import Api
from tests.factories import DEFAULT_TEST_SCOPES, CustomerFactory, issue_key

pytestmark = pytest.mark.django_db

NATIONAL_ID = "AB12345678"


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def action_names(response) -> list[str]:
    form = response.context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


def rows_containing(text: str) -> list[tuple[str, str]]:
    """(table, row as JSON) of every row of every table whose text contains `text`."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(
                f'SELECT row_to_json(t)::text FROM "{table}" t '  # noqa: S608 - table names from introspection
                "WHERE strpos(row_to_json(t)::text, %s) > 0",
                [text],
            )
            found += [(table, row) for (row,) in cursor.fetchall()]
    return found


def secret_part(full_key: str) -> str:
    return full_key.split("_", 2)[2]


def secrets_on_page(response, api_key) -> list[str]:
    """The full keys of `api_key` the page shows (`tx_<prefix>_<secret>`)."""
    return re.findall(rf"tx_{re.escape(api_key.prefix)}_[A-Za-z0-9_-]+", response.content.decode())


def assert_secret_page(response, *api_keys):
    """A page of its own, answering the POST itself: no redirect, no message, never cached.
    Returns each key's full secret, shown exactly once."""
    assert response.status_code == 200
    assert response.templates[0].name == "admin/institutions/apikey/new_secrets.html"
    assert "no-store" in response["Cache-Control"]
    assert "private" in response["Cache-Control"]
    assert response["Pragma"] == "no-cache"
    shown = []
    for api_key in api_keys:
        secrets = secrets_on_page(response, api_key)
        assert len(secrets) == 1, secrets
        shown.append(secrets[0])
        # Never through the messages framework or its cookie.
        assert not any(secret_part(secrets[0]) in m for m in messages_of(response))
        assert secret_part(secrets[0]) not in str(response.cookies)
    return shown


def key_works(full_key: str) -> int:
    return Api("v2", full_key).get("/products/accounts").status_code


@pytest.fixture
def customer(api_v2):
    response = api_v2.post(
        "/customers",
        {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826", "nationalId": NATIONAL_ID},
    )
    assert response.status_code == 201, response.content
    return Customer.objects.get(pk=response.json()["customerId"])


@pytest.fixture
def everything(institution, key, customer):
    """At least one row of every model the admin shows."""
    idempotency = IdempotencyRecord.objects.create(
        institution=institution,
        key=uuid.uuid4(),
        fingerprint="f" * 64,
        method="POST",
        path="/TX/v2/customers",
        status_code=201,
        response_body=b'{"storedResponseBody": "SENSITIVE-BODY"}',
    )
    return {
        Institution: institution,
        ApiKey: key[0],
        Customer: customer,
        AccountProduct: institution.account_products.first(),
        Event: Event.objects.filter(institution=institution).first(),
        IdempotencyRecord: idempotency,
    }


MODELS = [Institution, ApiKey, Customer, AccountProduct, Event, IdempotencyRecord]


# --- every page renders ---------------------------------------------------------------------
def test_admin_index_lists_every_model(admin_client):
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    for model in MODELS:
        assert url(model).encode() in response.content


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_and_change_page_render(admin_client, everything, model):
    obj = everything[model]
    changelist = admin_client.get(url(model))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count >= 1
    change = admin_client.get(url(model, "change", obj.pk))
    assert change.status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_search_and_filters_render(admin_client, everything, model):
    response = admin_client.get(url(model), {"q": "x"})
    assert response.status_code == 200
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url(model) + choice["query_string"]).status_code == 200


def test_anonymous_is_sent_to_login(client):
    response = client.get(url(ApiKey))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


# --- institutions ---------------------------------------------------------------------------
def test_institution_created_in_admin_gets_its_account_products(admin_client, admin_user):
    response = admin_client.post(
        url(Institution, "add"), {"name": "Admin Bank", "currency": "gbp", "_save": "1"}
    )
    assert response.status_code == 302
    institution = Institution.objects.get(name="Admin Bank")
    assert institution.currency == "GBP"
    assert sorted(institution.account_products.values_list("code", "currency")) == [
        ("AccountPrepaidAPI", "GBP"),
        ("CBSFinancialContractTypeAPI", "GBP"),
        ("GHSAccountPrepaidAPI", "GHS"),
    ]
    assert institution.time_zone == "UTC"
    assert institution.card_products.count() == 3
    entry = LogEntry.objects.get(object_id=institution.pk)
    assert (entry.action_flag, entry.user) == (ADDITION, admin_user)


def test_institution_time_zone_chosen_in_admin(admin_client):
    response = admin_client.post(
        url(Institution, "add"),
        {"name": "Berlin Bank", "currency": "EUR", "time_zone": "Mars/Olympus"},
    )
    assert response.status_code == 200
    assert "time_zone" in response.context["adminform"].form.errors
    assert not Institution.objects.filter(name="Berlin Bank").exists()
    response = admin_client.post(
        url(Institution, "add"),
        {"name": "Berlin Bank", "currency": "EUR", "time_zone": "Europe/Berlin", "_save": "1"},
    )
    assert response.status_code == 302
    assert Institution.objects.get(name="Berlin Bank").time_zone == "Europe/Berlin"


def test_institution_add_rejects_unknown_currency_and_duplicate_name(admin_client, institution):
    response = admin_client.post(url(Institution, "add"), {"name": "New", "currency": "XXY"})
    assert response.status_code == 200
    assert "currency" in response.context["adminform"].form.errors
    response = admin_client.post(
        url(Institution, "add"), {"name": institution.name, "currency": "EUR"}
    )
    assert response.status_code == 200
    assert "name" in response.context["adminform"].form.errors
    assert not Institution.objects.filter(name="New").exists()


def test_institution_list_shows_name_id_currency_created(admin_client, institution):
    response = admin_client.get(url(Institution))
    assert response.context["cl"].list_display == [
        "name",
        "id",
        "currency",
        "time_zone",
        "created_at",
    ]
    assert institution.pk in response.content.decode()


def test_institutions_and_keys_cannot_be_deleted(admin_client, institution, key):
    for model, obj in [(Institution, institution), (ApiKey, key[0])]:
        assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403
        assert admin_client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
        assert "delete_selected" not in action_names(admin_client.get(url(model)))
    assert Institution.objects.filter(pk=institution.pk).exists()
    assert ApiKey.objects.filter(pk=key[0].pk).exists()


# --- API keys: create, show once, never store -----------------------------------------------
def create_key_in_admin(admin_client, institution, networks="127.0.0.1\n::1", **extra):
    data = {
        "institution": institution.pk,
        "name": "Admin-made key",
        "networks": networks,
        "expires_at_0": "",
        "expires_at_1": "",
        "_save": "1",
        **extra,
    }
    return admin_client.post(url(ApiKey, "add"), data)


def test_key_created_in_admin_shows_secret_once_and_works(admin_client, admin_user, institution):
    response = create_key_in_admin(
        admin_client, institution, role="readonly", scopes=["cards:sensitive"]
    )
    api_key = ApiKey.objects.get(institution=institution, name="Admin-made key")
    assert api_key.scopes == ["cards:sensitive", "read"]
    assert api_key.created_by == "admin"
    assert sorted(api_key.allowed_networks.values_list("cidr", flat=True)) == [
        "127.0.0.1/32",
        "::1/128",
    ]
    (full_key,) = assert_secret_page(response, api_key)
    # The next page (whatever staff open next) shows no secret, in a message or otherwise.
    after = admin_client.get(url(ApiKey))
    assert messages_of(after) == []
    assert secret_part(full_key) not in after.content.decode()

    # It works over HTTP, from an allowed address, with the scopes it was given.
    assert key_works(full_key) == 200
    assert Api("v2", full_key).post("/customers", {}).status_code == 403

    # Shown once: neither the list nor the key's page shows it again.
    for page in [url(ApiKey), url(ApiKey, "change", api_key.pk)]:
        html = admin_client.get(page).content.decode()
        assert secret_part(full_key) not in html
        assert api_key.secret_hash not in html

    # Stored nowhere: no row of any table (keys, allowlist, log entries, sessions...).
    assert rows_containing(secret_part(full_key)) == []
    entry = LogEntry.objects.get(object_id=api_key.pk)
    assert (entry.action_flag, entry.user) == (ADDITION, admin_user)
    for session in Session.objects.all():
        assert secret_part(full_key) not in str(session.get_decoded())


def test_key_add_form_rejects_invalid_cidr_and_unknown_scope(admin_client, institution):
    response = create_key_in_admin(admin_client, institution, networks="127.0.0.1\n10.0.0.300/8")
    form = response.context["adminform"].form
    assert "10.0.0.300/8" in str(form.errors["networks"])
    response = create_key_in_admin(admin_client, institution, networks="  \n")
    assert "networks" in response.context["adminform"].form.errors
    response = create_key_in_admin(admin_client, institution, scopes=["root"])
    assert "scopes" in response.context["adminform"].form.errors
    response = create_key_in_admin(admin_client, institution, role="root", scopes=["read"])
    assert "role" in response.context["adminform"].form.errors
    # No role and no scope: a key that may do nothing is refused, never defaulted.
    response = create_key_in_admin(admin_client, institution)
    assert "A key needs a role or at least one scope" in str(
        response.context["adminform"].form.errors["scopes"]
    )
    assert not ApiKey.objects.filter(institution=institution).exists()


def test_key_created_with_a_role_gets_its_preset(admin_client, institution):
    response = create_key_in_admin(admin_client, institution, role="network")
    api_key = ApiKey.objects.get(institution=institution)
    assert api_key.scopes == ["network", "read"]
    assert_secret_page(response, api_key)


def test_key_list_shows_status_and_never_the_hash(admin_client, institution):
    active, _ = issue_key(institution)
    revoked, _ = issue_key(institution)
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at="2020-01-01T00:00:00Z")
    response = admin_client.get(url(ApiKey))
    html = response.content.decode()
    assert response.context["cl"].list_display == [
        "action_checkbox",
        "prefix",
        "institution",
        "name",
        "scopes_display",
        "status_display",
        "created_at",
        "expires_at",
    ]
    assert active.secret_hash not in html and revoked.secret_hash not in html
    assert "revoked" in html and "active" in html
    filtered = admin_client.get(url(ApiKey), {"status": "revoked"})
    assert list(filtered.context["cl"].result_list) == [revoked]


def test_existing_key_fields_are_read_only_but_its_scopes(admin_client, key):
    api_key, _ = key
    response = admin_client.get(url(ApiKey, "change", api_key.pk))
    form = response.context["adminform"].form
    assert list(form.fields) == ["scopes"]
    assert sorted(form.initial["scopes"]) == sorted(api_key.scopes)
    html = response.content.decode()
    assert api_key.prefix in html
    assert api_key.secret_hash not in html


def test_revoked_key_scopes_are_read_only(admin_client, key):
    api_key, _ = key
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at="2020-01-01T00:00:00Z")
    response = admin_client.get(url(ApiKey, "change", api_key.pk))
    assert list(response.context["adminform"].form.fields) == []
    assert ", ".join(api_key.scopes) in response.content.decode()


def scopes_form(api_key, scopes):
    return inline_data(api_key, [(api_key.allowed_networks.get(), "127.0.0.1/32", False)]) | {
        "scopes": scopes
    }


def test_scopes_edited_in_admin_through_the_service_and_logged(admin_client, admin_user, key):
    api_key, full_key = key
    assert Api("v2", full_key).post("/customers", {}).status_code == 400  # allowed: bad body
    response = admin_client.post(
        url(ApiKey, "change", api_key.pk), scopes_form(api_key, ["read", "network"])
    )
    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.scopes == ["network", "read"]
    # Effective at the key's next request.
    refused = Api("v2", full_key).post("/customers", {})
    assert refused.status_code == 403
    assert refused.json()["details"] == {"requiredScope": "customers:write"}
    assert key_works(full_key) == 200

    entries = LogEntry.objects.filter(object_id=api_key.pk, action_flag=CHANGE)
    messages = [entry.get_change_message() for entry in entries]
    scope_entry = entries.get(change_message__startswith="Scopes changed")
    assert scope_entry.user == admin_user
    removed = sorted(set(DEFAULT_TEST_SCOPES) - {"read", "network"})
    assert scope_entry.change_message == (
        f"Scopes changed: removed {', '.join(removed)} (now: network, read)."
    )
    assert not any("Scopes" in m and "Changed" in m for m in messages)

    # Granting back is logged the same way; saving unchanged scopes logs no scope entry.
    admin_client.post(url(ApiKey, "change", api_key.pk), scopes_form(api_key, ["read"]))
    admin_client.post(url(ApiKey, "change", api_key.pk), scopes_form(api_key, ["read"]))
    assert [
        e.change_message
        for e in LogEntry.objects.filter(
            object_id=api_key.pk, change_message__startswith="Scopes"
        ).order_by("pk")
    ][1:] == ["Scopes changed: removed network (now: read)."]


def test_scopes_edit_refuses_none_and_unknown(admin_client, key):
    api_key, _ = key
    before = list(api_key.scopes)
    for scopes in ([], ["root"], ["read", "root"]):
        response = admin_client.post(
            url(ApiKey, "change", api_key.pk), scopes_form(api_key, scopes)
        )
        assert response.status_code == 200
        assert "scopes" in response.context["adminform"].form.errors
    api_key.refresh_from_db()
    assert api_key.scopes == before
    assert not LogEntry.objects.filter(object_id=api_key.pk).exists()


# --- API keys: revoke and rotate ------------------------------------------------------------
def run_action(admin_client, action, *keys):
    return admin_client.post(
        url(ApiKey),
        {"action": action, "_selected_action": [k.pk for k in keys]},
        follow=True,
    )


def test_revoke_action_revokes_and_logs_the_staff_user(admin_client, admin_user, key):
    api_key, full_key = key
    assert key_works(full_key) == 200
    response = run_action(admin_client, "revoke_keys", api_key)
    assert response.status_code == 200
    api_key.refresh_from_db()
    assert api_key.status == "revoked"
    assert api_key.revoked_by == "admin"
    assert key_works(full_key) == 401
    entry = LogEntry.objects.get(object_id=api_key.pk, action_flag=CHANGE)
    assert entry.user == admin_user
    assert "Revoked" in entry.get_change_message()
    # Revoking again changes nothing and logs nothing.
    run_action(admin_client, "revoke_keys", api_key)
    assert LogEntry.objects.filter(object_id=api_key.pk).count() == 1


def test_rotate_action_shows_new_secret_once(admin_client, admin_user, key):
    api_key, old_full_key = key
    response = admin_client.post(
        url(ApiKey), {"action": "rotate_keys", "_selected_action": [api_key.pk]}
    )
    api_key.refresh_from_db()
    new_key = api_key.replaced_by
    assert new_key is not None
    (new_full_key,) = assert_secret_page(response, new_key)
    assert secrets_on_page(response, api_key) == []
    assert secret_part(new_full_key) not in admin_client.get(url(ApiKey)).content.decode()
    assert key_works(new_full_key) == 200
    assert key_works(old_full_key) == 200  # grace period
    assert list(new_key.allowed_networks.values_list("cidr", flat=True)) == ["127.0.0.1/32"]
    assert rows_containing(secret_part(new_full_key)) == []
    old_entry = LogEntry.objects.get(object_id=api_key.pk)
    assert old_entry.user == admin_user
    assert new_key.id in old_entry.get_change_message()
    assert LogEntry.objects.get(object_id=new_key.pk).action_flag == ADDITION
    # A rotated key cannot be rotated again.
    response = run_action(admin_client, "rotate_keys", api_key)
    assert any("already rotated" in m for m in messages_of(response))
    assert ApiKey.objects.count() == 2


def test_rotate_now_action_revokes_the_old_key_at_once(admin_client, admin_user, key):
    api_key, old_full_key = key
    response = admin_client.post(
        url(ApiKey), {"action": "rotate_keys_now", "_selected_action": [api_key.pk]}
    )
    api_key.refresh_from_db()
    new_key = api_key.replaced_by
    (new_full_key,) = assert_secret_page(response, new_key)
    assert key_works(new_full_key) == 200
    assert key_works(old_full_key) == 401  # no grace period: a leaked key stops now
    assert api_key.revoked_at is not None
    assert api_key.revoked_by == admin_user.get_username()
    assert new_key.scopes == api_key.scopes
    assert new_key.expires_at == api_key.expires_at
    assert "revoked at" in LogEntry.objects.get(object_id=api_key.pk).get_change_message()


# --- API keys: allowlist inline -------------------------------------------------------------
def inline_data(api_key, rows, extra=None):
    """POST data for the key's change page with the allowlist rows [(network or None, cidr,
    delete)]."""
    prefix = "allowed_networks"
    initial = [row for row in rows if row[0] is not None]
    data = {
        f"{prefix}-TOTAL_FORMS": str(len(rows)),
        f"{prefix}-INITIAL_FORMS": str(len(initial)),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
        "scopes": list(api_key.scopes),
        "_continue": "1",
    }
    for index, (network, cidr, delete) in enumerate(rows):
        data[f"{prefix}-{index}-id"] = network.pk if network else ""
        data[f"{prefix}-{index}-api_key"] = api_key.pk
        data[f"{prefix}-{index}-cidr"] = cidr
        if delete:
            data[f"{prefix}-{index}-DELETE"] = "on"
    data.update(extra or {})
    return data


def test_allowlist_inline_adds_normalized_and_removes(admin_client, admin_user, key):
    api_key, full_key = key
    loopback = api_key.allowed_networks.get()
    response = admin_client.post(
        url(ApiKey, "change", api_key.pk),
        inline_data(api_key, [(loopback, "127.0.0.1/32", False), (None, "10.0.0.7/8", False)]),
    )
    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    assert sorted(api_key.allowed_networks.values_list("cidr", flat=True)) == [
        "10.0.0.0/8",
        "127.0.0.1/32",
    ]
    entry = LogEntry.objects.get(object_id=api_key.pk)
    assert entry.user == admin_user and "10.0.0.0/8" in entry.get_change_message()

    # Change the loopback row to another range and remove 10/8: the key no longer works here.
    ten = api_key.allowed_networks.get(cidr="10.0.0.0/8")
    response = admin_client.post(
        url(ApiKey, "change", api_key.pk),
        inline_data(api_key, [(loopback, "192.0.2.9/24", False), (ten, "10.0.0.0/8", True)]),
    )
    assert response.status_code == 302
    assert list(api_key.allowed_networks.values_list("cidr", flat=True)) == ["192.0.2.0/24"]
    assert key_works(full_key) == 403


@pytest.mark.django_db(transaction=True)
def test_the_key_form_post_is_one_operation_of_the_staff_user(admin_client, admin_user, key):
    """No test transaction around it: the post's writes (the scopes, a network added) run in
    the one durable transaction of the staff user's operation (backoffice.actions.forms), with
    the admin's LogEntries, and commit together."""
    api_key, _ = key
    loopback = api_key.allowed_networks.get()
    data = inline_data(api_key, [(loopback, "127.0.0.1/32", False), (None, "10.0.0.7/8", False)])
    response = admin_client.post(url(ApiKey, "change", api_key.pk), data | {"scopes": ["read"]})
    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.scopes == ["read"]
    assert sorted(api_key.allowed_networks.values_list("cidr", flat=True)) == [
        "10.0.0.0/8",
        "127.0.0.1/32",
    ]
    assert {entry.user for entry in LogEntry.objects.filter(object_id=api_key.pk)} == {admin_user}


def test_allowlist_inline_rejects_invalid_cidr(admin_client, key):
    api_key, _ = key
    loopback = api_key.allowed_networks.get()
    response = admin_client.post(
        url(ApiKey, "change", api_key.pk),
        inline_data(api_key, [(loopback, "127.0.0.1/32", False), (None, "not-an-ip", False)]),
    )
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert "not-an-ip" in str(errors[1]["cidr"])
    assert list(AllowedNetwork.objects.values_list("cidr", flat=True)) == ["127.0.0.1/32"]


def test_allowlist_inline_rejects_duplicate_after_normalizing(admin_client, key):
    api_key, _ = key
    loopback = api_key.allowed_networks.get()
    response = admin_client.post(
        url(ApiKey, "change", api_key.pk),
        inline_data(api_key, [(loopback, "127.0.0.1/32", False), (None, "127.0.0.1", False)]),
    )
    assert response.status_code == 200
    assert AllowedNetwork.objects.count() == 1


# --- customers ------------------------------------------------------------------------------
def customer_form(customer, **changes):
    data = {
        "first_name": customer.first_name,
        "last_name": customer.last_name,
        "country_code": customer.country_code,
        "email": customer.email or "",
        "phone": customer.phone or "",
        "date_of_birth": "",
        "address_line1": "",
        "address_line2": "",
        "address_city": "",
        "address_postal_code": "",
        "address_country_code": "",
        "_save": "1",
    }
    data.update(changes)
    return data


def test_customer_page_never_shows_the_national_id(admin_client, customer):
    page, edit = url(Customer, "change", customer.pk), {"edit": "1"}  # the page, its form
    for html in [
        admin_client.get(url(Customer)).content.decode(),
        admin_client.get(page).content.decode(),
        admin_client.get(page, edit).content.decode(),
    ]:
        assert NATIONAL_ID not in html
        assert customer.national_id_encrypted not in html
    assert "5678" in admin_client.get(page).content.decode()
    assert "5678" in admin_client.get(page, edit).content.decode()
    form = admin_client.get(page, edit).context["adminform"].form
    assert not {"national_id_encrypted", "national_id_last4"} & set(form.fields)


def test_customer_edit_goes_through_service_and_emits_event(admin_client, admin_user, customer):
    response = admin_client.post(
        url(Customer, "change", customer.pk),
        customer_form(
            customer,
            last_name="Byron",
            phone="+447700900123",
            address_line1="12 St James's Square",
            address_city="London",
            address_postal_code="SW1Y 4JH",
            address_country_code="826",
        ),
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert (customer.last_name, customer.phone) == ("Byron", "+447700900123")
    assert customer.address == {
        "line1": "12 St James's Square",
        "line2": None,
        "city": "London",
        "postal_code": "SW1Y 4JH",
        "country_code": "826",
    }
    assert customer.national_id() == NATIONAL_ID  # untouched
    event = Event.objects.get(type="customer.updated", object_id=customer.pk)
    assert event_payload(event)["data"] == {"changedFields": ["address", "lastName", "phone"]}
    entry = LogEntry.objects.get(object_id=customer.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert NATIONAL_ID not in entry.change_message


def test_customer_edit_without_change_emits_nothing(admin_client, customer):
    response = admin_client.post(url(Customer, "change", customer.pk), customer_form(customer))
    assert response.status_code == 302
    assert not Event.objects.filter(type="customer.updated").exists()


def test_customer_edit_validates_like_the_api(admin_client, customer):
    response = admin_client.post(
        url(Customer, "change", customer.pk),
        customer_form(customer, country_code="999", phone="0123", address_city="London"),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {
        "country_code",
        "phone",
        "address_line1",
        "address_postal_code",
        "address_country_code",
    }
    assert not Event.objects.filter(type="customer.updated").exists()


def test_customers_search_by_name_and_id_filter_by_country(admin_client, customer, institution):
    german = CustomerFactory(institution=institution, last_name="Noether", country_code="276")
    assert list(admin_client.get(url(Customer), {"q": "Lovelace"}).context["cl"].result_list) == [
        customer
    ]
    assert list(admin_client.get(url(Customer), {"q": german.pk}).context["cl"].result_list) == [
        german
    ]
    by_country = admin_client.get(url(Customer), {"country": "276"})
    assert list(by_country.context["cl"].result_list) == [german]


def test_customers_cannot_be_added_or_deleted(admin_client, customer):
    assert admin_client.get(url(Customer, "add")).status_code == 403
    assert admin_client.get(url(Customer, "delete", customer.pk)).status_code == 403


# --- read-only: events, idempotency records ------------------------------------------------
# (Account products are added and changed through their services:
# tests/backoffice/accounts/test_products_admin.py.)
@pytest.mark.parametrize("model", [Event, IdempotencyRecord], ids=lambda model: model.__name__)
def test_read_only_models_have_no_add_change_delete(admin_client, everything, model):
    obj = everything[model]
    assert admin_client.get(url(model, "add")).status_code == 403
    assert admin_client.post(url(model, "add"), {}).status_code == 403
    assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.post(url(model, "change", obj.pk), {}).status_code == 403
    changelist = admin_client.get(url(model))
    assert not changelist.context["has_add_permission"]
    assert action_names(changelist) == []
    assert model.objects.filter(pk=obj.pk).exists()


def test_events_filter_by_type_and_institution(admin_client, customer, other_institution):
    CustomerFactory.create(institution=other_institution)  # not through the service: no event
    Event.objects.create(
        institution=other_institution,
        type="customer.created",
        object_type="customer",
        object_id="x",
    )
    by_type = admin_client.get(url(Event), {"type": "customer.created"})
    assert by_type.context["cl"].result_count == 2
    by_institution = admin_client.get(
        url(Event), {"institution__id__exact": customer.institution_id}
    )
    assert [e.object_id for e in by_institution.context["cl"].result_list] == [customer.pk]


def test_idempotency_record_page_hides_the_response_body(admin_client, everything):
    record = everything[IdempotencyRecord]
    html = admin_client.get(url(IdempotencyRecord, "change", record.pk)).content.decode()
    assert record.path in html
    assert "SENSITIVE-BODY" not in html and "storedResponseBody" not in html
