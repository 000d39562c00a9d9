"""The webhooks back office: endpoints and deliveries render view-only, the secret is never
shown nor read, endpoints are enabled and disabled through `webhook_endpoint_update`, failed
deliveries are retried through `delivery_retry` after a confirmation page, and every change
leaves one LogEntry per object with the staff user."""

import re

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from events.services import emit
from tests.factories import InstitutionFactory
from tests.staff import sign_in
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

TEMPLATE = "admin/webhooks/webhookdelivery/retry_confirmation.html"
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.level_tag, str(message)) for message in response.context["messages"]]


def start_action(client, model, action, *objects):
    return client.post(
        url(model),
        {
            "action": action,
            "select_across": "0",
            "index": "0",
            "_selected_action": [obj.pk for obj in objects],
        },
        follow=True,
    )


def confirm(client, page):
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    return client.post(url(WebhookDelivery), data, follow=True)


def refreshed(obj):
    return type(obj).objects.get(pk=obj.pk)


def jobs_of(delivery) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status, lock FROM procrastinate_jobs WHERE args->>'delivery_id' = %s "
            "ORDER BY id",
            [delivery.pk],
        )
        return cursor.fetchall()


def finish(delivery, status, attempts):
    """Give `delivery` attempts (status codes, None: a timeout) and a final status."""
    for number, code in enumerate(attempts, start=1):
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=timezone.now(),
            duration_ms=12 * number,
            status_code=code,
            error="" if code else "timeout: no response within 10 s",
            response_excerpt=f"answer {number}" if code else "",
            succeeded=code is not None and 200 <= code < 300,
        )
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        attempts=len(attempts),
        last_status_code=attempts[-1],
        completed_at=timezone.now(),
        next_attempt_at=None,
    )
    return refreshed(delivery)


@pytest.fixture
def world():
    fi = InstitutionFactory()
    created = webhook_endpoint_create(
        institution=fi, url="https://hooks.example.com/tx", event_types=["*"]
    )
    quiet = webhook_endpoint_create(
        institution=fi, url="https://quiet.example.com/", event_types=["*"], enabled=False
    ).endpoint
    events = []
    with transaction.atomic():
        for type in ("customer.created", "customer.updated", "account.opened"):
            events.append(
                emit(institution=fi, type=type, object_type=type.split(".")[0], object_id="obj_1")
            )
    failed, succeeded, pending = (WebhookDelivery.objects.get(event=event) for event in events)
    return {
        "fi": fi,
        "endpoint": created.endpoint,
        "secret": created.secret,
        "quiet": quiet,
        "failed": finish(failed, "failed", [500, None, 503]),
        "succeeded": finish(succeeded, "succeeded", [200]),
        "pending": pending,
    }


# --- pages ----------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [WebhookEndpoint, WebhookDelivery], ids=lambda m: m.__name__)
def test_pages_render_and_are_view_only(admin_client, world, model):
    changelist = admin_client.get(url(model))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count == model.objects.count()
    for obj in model.objects.all():
        response = admin_client.get(url(model, "change", obj.pk))
        assert response.status_code == 200
        assert list(response.context["adminform"].form.fields) == []
        assert 'name="_save"' not in response.content.decode()
    assert admin_client.get(url(model, "add")).status_code == 403
    obj = model.objects.first()
    assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.get(url(model), {"q": obj.pk}).context["cl"].result_count == 1
    for spec in changelist.context["cl"].filter_specs:
        for choice in spec.choices(changelist.context["cl"]):
            assert admin_client.get(url(model) + choice["query_string"]).status_code == 200


def test_the_secret_is_never_shown_nor_read(admin_client, world):
    endpoint = world["endpoint"]
    pages = [url(WebhookEndpoint), url(WebhookDelivery)]
    pages += [url(WebhookEndpoint, view, endpoint.pk) for view in ("change", "history")]
    pages += [url(WebhookDelivery, "change", world["failed"].pk)]
    with CaptureQueriesContext(connection) as queries:
        for page in pages:
            response = admin_client.get(page)
            assert response.status_code == 200
            html = response.content.decode()
            assert world["secret"] not in html and world["secret"][6:] not in html
            assert endpoint.secret_encrypted not in html
        start_action(admin_client, WebhookDelivery, "retry_deliveries", world["failed"])
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert '"webhooks_webhookendpoint"."url"' in sql
    assert "secret_encrypted" not in sql


def test_a_delivery_shows_its_attempts(admin_client, world):
    delivery = world["failed"]
    html = admin_client.get(url(WebhookDelivery, "change", delivery.pk)).content.decode()
    for text in [
        "https://hooks.example.com/tx",
        delivery.event_id,
        "customer.created",
        "answer 1",
        "answer 3",
        "timeout: no response within 10 s",
        "503",
        "36",  # the third attempt's duration
    ]:
        assert text in html, text
    assert 'name="attempt_set-0-number"' not in html  # shown, not a form


def test_delivery_filters(admin_client, world):
    def ids(params):
        response = admin_client.get(url(WebhookDelivery), params)
        return {delivery.pk for delivery in response.context["cl"].result_list}

    assert ids({"status__exact": "failed"}) == {world["failed"].pk}
    assert ids({"event_type": "account.opened"}) == {world["pending"].pk}
    assert ids({"q": world["failed"].event_id}) == {world["failed"].pk}
    assert ids({"q": world["endpoint"].pk}) == {
        world[name].pk for name in ("failed", "succeeded", "pending")
    }


# --- endpoints: enable, disable -------------------------------------------------------------
def test_disable_and_enable_endpoints_through_the_service(admin_client, admin_user, world):
    endpoint, quiet = world["endpoint"], world["quiet"]
    response = start_action(admin_client, WebhookEndpoint, "disable_endpoints", endpoint, quiet)
    assert messages_of(response) == [
        ("success", "Disabled 1 endpoint(s)."),
        ("info", f"Already disabled, left as they were: {quiet.pk}."),
    ]
    assert refreshed(endpoint).enabled is False
    entry = LogEntry.objects.get(object_id=endpoint.pk)
    assert (entry.action_flag, entry.user, entry.get_change_message()) == (
        CHANGE,
        admin_user,
        "Disabled (admin action “Disable”).",
    )
    response = start_action(admin_client, WebhookEndpoint, "enable_endpoints", endpoint, quiet)
    assert messages_of(response) == [("success", "Enabled 2 endpoint(s).")]
    assert refreshed(quiet).enabled is True
    assert refreshed(quiet).secret_encrypted == world["quiet"].secret_encrypted
    assert LogEntry.objects.filter(object_id=quiet.pk).get().get_change_message() == (
        "Enabled (admin action “Enable”)."
    )


# --- deliveries: retry ----------------------------------------------------------------------
def test_retry_asks_then_queues_the_failed_delivery(admin_client, admin_user, world):
    failed = world["failed"]
    page = start_action(admin_client, WebhookDelivery, "retry_deliveries", failed)
    assert page.status_code == 200
    assert page.templates[0].name == TEMPLATE
    assert "Retry 1 delivery(ies)" in page.content.decode()
    assert refreshed(failed).status == "failed"  # only the confirmation changes anything
    assert jobs_of(failed) == [("todo", f"webhook:{world['endpoint'].pk}:customer:obj_1")]

    before = timezone.now()
    response = confirm(admin_client, page)
    assert response.redirect_chain[-1][0] == url(WebhookDelivery)
    assert messages_of(response) == [("success", "Retrying 1 delivery(ies): queued now.")]
    stored = refreshed(failed)
    assert (stored.status, stored.completed_at, stored.attempts) == ("pending", None, 3)
    assert before <= stored.next_attempt_at <= timezone.now()
    assert (stored.retry_until - stored.next_attempt_at).total_seconds() == 3 * 24 * 3600
    lock = f"webhook:{world['endpoint'].pk}:customer:obj_1"
    assert jobs_of(failed) == [("todo", lock), ("todo", lock)]  # a new job, same resource
    entry = LogEntry.objects.get(object_id=failed.pk)
    assert (entry.action_flag, entry.user, entry.get_change_message()) == (
        CHANGE,
        admin_user,
        "Retried (admin action “Retry”).",
    )


def test_only_failed_deliveries_of_enabled_endpoints_are_retried(admin_client, world):
    failed, succeeded, pending = world["failed"], world["succeeded"], world["pending"]
    WebhookEndpoint.objects.filter(pk=world["endpoint"].pk).update(enabled=False)
    page = start_action(admin_client, WebhookDelivery, "retry_deliveries", failed, succeeded)
    response = confirm(admin_client, page)
    assert messages_of(response) == [
        (
            "error",
            f"{failed.pk}: The endpoint is disabled: enable it before retrying its deliveries.",
        ),
        ("error", f"{succeeded.pk}: Only a failed delivery can be retried; this one is succeeded."),
    ]
    WebhookEndpoint.objects.filter(pk=world["endpoint"].pk).update(enabled=True)
    response = confirm(
        admin_client,
        start_action(admin_client, WebhookDelivery, "retry_deliveries", pending, failed),
    )
    assert messages_of(response) == [
        ("error", f"{pending.pk}: Only a failed delivery can be retried; this one is pending."),
        ("success", "Retrying 1 delivery(ies): queued now."),
    ]
    assert [refreshed(d).status for d in (failed, succeeded, pending)] == [
        "pending",
        "succeeded",
        "pending",
    ]
    assert list(LogEntry.objects.values_list("object_id", flat=True)) == [failed.pk]


def test_staff_without_change_permission_cannot_retry(client, world):
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(
        Permission.objects.get(codename="view_webhookdelivery"),
        Permission.objects.get(codename="view_webhookendpoint"),
    )
    sign_in(client, viewer)
    response = client.get(url(WebhookDelivery))
    assert response.status_code == 200
    assert response.context["action_form"] is None or "retry_deliveries" not in [
        name for name, _ in response.context["action_form"].fields["action"].choices
    ]
    failed = world["failed"]
    confirm(client, start_action(client, WebhookDelivery, "retry_deliveries", failed))
    start_action(client, WebhookEndpoint, "disable_endpoints", world["endpoint"])
    assert refreshed(failed).status == "failed"
    assert refreshed(world["endpoint"]).enabled is True
    assert not LogEntry.objects.exists()
