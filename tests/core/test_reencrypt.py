"""Key rotation: `reencrypt_sensitive_data` (`core.reencryption`) moves every card PAN and CVV and
every customer national id to the newest key of FIELD_ENCRYPTION_KEYS, changing nothing else."""

import base64
import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings

from backoffice.models import AppDevice
from backoffice.second_factor import device_for_code
from cards.models import Card
from core.reencryption import sensitive_data_reencrypt
from customers.models import Customer
from customers.services import customer_create
from tests.accounts.ledger.helpers import run_threads
from tests.cards.helpers import issue_card, make_account, make_institution
from tests.staff import app_code
from webhooks.models import WebhookEndpoint
from webhooks.services import webhook_endpoint_create

OLD = "old:" + base64.b64encode(b"o" * 32).decode()
NEW = "new:" + base64.b64encode(b"n" * 32).decode()
ROTATING = f"{NEW},{OLD}"
NATIONAL_IDS = ["QX-5518-7734", "078-05-1120"]


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("reencrypt_sensitive_data", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def make_data(cards: int = 3) -> dict:
    """Customers (two with a national id, one without) and `cards` cards."""
    fi = make_institution()
    customers = [
        customer_create(
            institution=fi,
            first_name="Ada",
            last_name="Lovelace",
            country_code="276",
            national_id=national_id,
        )
        for national_id in [*NATIONAL_IDS, None]
    ]
    made = [issue_card(make_account(fi, customers[i % 3])) for i in range(cards)]
    return {"customers": customers, "cards": made}


def stored() -> dict:
    """Every ciphertext as the database holds it, with what else must not change."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, pan_encrypted, cvv_encrypted, pan_fingerprint, pan_first6, pan_last4,"
            " updated_at FROM cards_card ORDER BY id"
        )
        cards = {row[0]: row[1:] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT id, national_id_encrypted, national_id_last4, updated_at"
            " FROM customers_customer ORDER BY id"
        )
        customers = {row[0]: row[1:] for row in cursor.fetchall()}
    return {"cards": cards, "customers": customers}


def key_ids(state: dict) -> set[str]:
    ids = {value.partition(":")[0] for row in state["cards"].values() for value in row[:2]}
    ids |= {row[0].partition(":")[0] for row in state["customers"].values() if row[0]}
    return ids


def plaintexts() -> dict:
    return {
        "cards": {card.pk: (card.pan(), card.cvv()) for card in Card.objects.all()},
        "customers": {customer.pk: customer.national_id() for customer in Customer.objects.all()},
    }


def secrets_of(clear: dict) -> list[str]:
    values = [value for pair in clear["cards"].values() for value in pair]
    return values + [value for value in clear["customers"].values() if value]


@pytest.mark.django_db
def test_every_value_moves_to_the_newest_key_and_nothing_else_changes():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        make_data()
        before, clear = stored(), plaintexts()
    assert key_ids(before) == {"old"}
    assert sorted(filter(None, clear["customers"].values())) == sorted(NATIONAL_IDS)

    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        out, err = run()
        after = stored()
        assert plaintexts() == clear

    assert out == (
        "Re-encrypted under key 'new': 3 card(s) (PAN and CVV), 2 customer national id(s), "
        "0 decisioning signing secret(s), 0 external account number(s) or IBAN(s), 0 stored "
        "idempotent response(s), 0 inbound entry account number(s), 0 staff authenticator "
        "app key(s) and 0 webhook signing secret(s).\n"
    )
    assert err == f"[{'#' * 30}] 5/5\n"
    assert key_ids(after) == {"new"}
    for card_id, (pan, cvv, *rest) in after["cards"].items():
        old_pan, old_cvv, *old_rest = before["cards"][card_id]
        assert pan != old_pan and cvv != old_cvv
        assert rest == old_rest  # fingerprint, first six, last four, updated_at
    for customer_id, (national_id, *rest) in after["customers"].items():
        old_national_id, *old_rest = before["customers"][customer_id]
        assert (national_id is None) == (old_national_id is None)
        assert rest == old_rest  # last four, updated_at
    for secret in secrets_of(clear):
        assert secret not in out and secret not in err

    # The old key can go now.
    with override_settings(FIELD_ENCRYPTION_KEYS=NEW):
        assert plaintexts() == clear


@pytest.mark.django_db
def test_a_second_run_changes_nothing():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        make_data()
    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        run()
        once = stored()
        out, err = run()

        assert out == (
            "Re-encrypted under key 'new': 0 card(s) (PAN and CVV), 0 customer national id(s), "
            "0 decisioning signing secret(s), 0 external account number(s) or IBAN(s), 0 stored "
            "idempotent response(s), 0 inbound entry account number(s), 0 staff "
            "authenticator app key(s) and 0 webhook signing secret(s).\n"
        )
        assert err == f"[{'#' * 30}] 0/0\n"
        assert stored() == once


@pytest.mark.django_db
def test_values_already_under_the_newest_key_are_left_as_they_are():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        make_data(cards=2)
    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        fresh = make_data(cards=1)
        before = stored()

        report = sensitive_data_reencrypt()

        after = stored()
    assert (report.counts["cards"], report.counts["customers"], report.remaining) == (2, 2, 0)
    [card] = fresh["cards"]
    assert after["cards"][card.pk] == before["cards"][card.pk]
    for customer in fresh["customers"]:
        assert after["customers"][customer.pk] == before["customers"][customer.pk]
    assert key_ids(after) == {"new"}


@pytest.mark.django_db
def test_a_dry_run_only_counts():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        make_data()
    before = stored()
    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        out, err = run("--dry-run")

    assert out == (
        "Would re-encrypt under key 'new': 3 card(s) (PAN and CVV), 2 customer national id(s), "
        "0 decisioning signing secret(s), 0 external account number(s) or IBAN(s), 0 stored "
        "idempotent response(s), 0 inbound entry account number(s), 0 staff authenticator "
        "app key(s) and 0 webhook signing secret(s).\n"
    )
    assert err == ""
    assert stored() == before


@pytest.mark.django_db
def test_a_value_whose_key_is_gone_stops_the_run_and_its_batch_is_rolled_back():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        made = make_data()
        clear = plaintexts()
    before = stored()
    with override_settings(FIELD_ENCRYPTION_KEYS=NEW):  # "old" forgotten
        with pytest.raises(CommandError) as excinfo:
            run()

    first = min(card.pk for card in made["cards"])
    assert str(excinfo.value) == (
        f"Card {first}: a stored value does not decrypt "
        "(No key with id 'old' in FIELD_ENCRYPTION_KEYS.)."
    )
    assert stored() == before
    for secret in secrets_of(clear):
        assert secret not in str(excinfo.value)


@pytest.mark.django_db
def test_a_tampered_value_stops_the_run():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        made = make_data(cards=1)
    customer, other = made["customers"][:2]
    # A ciphertext copied from another customer does not decrypt (its associated data differs).
    Customer.objects.filter(pk=customer.pk).update(
        national_id_encrypted=other.national_id_encrypted
    )
    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        with pytest.raises(CommandError) as excinfo:
            run()

    assert str(excinfo.value) == (
        f"Customer {customer.pk}: a stored value does not decrypt (authentication failed)."
    )


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_reencrypt_each_row_once():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        make_data(cards=9)
        clear = plaintexts()
    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        reports = run_threads(2, lambda index: sensitive_data_reencrypt(batch_size=2))

        assert sum(report.counts["cards"] for report in reports) == 9
        assert sum(report.counts["customers"] for report in reports) == 2
        assert key_ids(stored()) == {"new"}
        assert plaintexts() == clear


@pytest.mark.django_db
def test_webhook_signing_secrets_move_to_the_newest_key():
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        created = webhook_endpoint_create(
            institution=make_institution(),
            url="https://hooks.example.com/tx",
            event_types=["*"],
        )
    endpoint = WebhookEndpoint.objects.get(pk=created.endpoint.pk)
    assert endpoint.secret_encrypted.startswith("old:")

    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        out, _ = run()
        endpoint.refresh_from_db()
        assert endpoint.secret_encrypted.startswith("new:")
        assert endpoint.secret() == created.secret
        again, _ = run()

    assert out.endswith("and 1 webhook signing secret(s).\n")
    assert again.endswith("and 0 webhook signing secret(s).\n")


@pytest.mark.django_db
def test_staff_authenticator_app_keys_move_to_the_newest_key():
    user = User.objects.create_user("ops", is_staff=True)
    with override_settings(FIELD_ENCRYPTION_KEYS=OLD):
        device = AppDevice.create(user=user, confirmed=True)
        key = device.bin_key
    stored = AppDevice.objects.values_list("key_encrypted", flat=True).get()
    assert stored.startswith("old:")

    with override_settings(FIELD_ENCRYPTION_KEYS=ROTATING):
        out, _ = run()
        again, _ = run()
    device.refresh_from_db()
    assert device.key_encrypted.startswith("new:") and device.key_encrypted != stored
    assert "1 staff authenticator app key(s)" in out
    assert "0 staff authenticator app key(s)" in again
    # The old key can go: the app's codes still check.
    with override_settings(FIELD_ENCRYPTION_KEYS=NEW):
        assert device.bin_key == key
        assert device_for_code(user, app_code(device)) == device
