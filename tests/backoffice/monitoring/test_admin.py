"""The monitoring back office: rules and alerts render, cards show by masked PAN only, rules are
enabled and disabled through `monitoring_rule_update`, alerts are resolved through
`alert_resolve` after a confirmation page asking for a note, and every change leaves one
LogEntry per object with the staff user."""

import re

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from cards.models import Card
from events.models import Event
from events.payloads import event_payload
from monitoring.models import MonitoringAlert, MonitoringRule
from monitoring.services import alert_resolve
from tests.cards.helpers import make_institution
from tests.monitoring.helpers import active_card, make_rule, raise_alerts, threshold
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

TEMPLATE = "admin/monitoring/monitoringalert/resolve_confirmation.html"
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.level_tag, str(message)) for message in response.context["messages"]]


def start_action(client, model, action, *objects, path=None):
    return client.post(
        path or url(model),
        {
            "action": action,
            "select_across": "0",
            "index": "0",
            "_selected_action": [obj.pk for obj in objects],
        },
        follow=True,
    )


def confirm(client, page, note):
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    data["note"] = note
    return client.post(url(MonitoringAlert), data, follow=True)


def refreshed(obj):
    return type(obj).objects.get(pk=obj.pk)


@pytest.fixture
def world():
    """Two institutions' rules of every kind, and alerts: authorization and transfer, alert and
    decline, one resolved."""
    fi = make_institution()
    card = active_card(fi)
    rules = {
        "threshold": threshold(fi, amount=1_000, action="decline", risk_level="low"),
        "count": make_rule(fi, "velocity_count", window_seconds=3600, max_count=5),
        "sum": make_rule(
            fi, "velocity_amount", window_seconds=600, max_amount=10**6, currency="EUR"
        ),
        "mcc": make_rule(fi, "blocked_mcc", mccs=["5411", "7995"]),
        "country": make_rule(fi, "blocked_country", countries=["408"], enabled=False),
    }
    threshold_alert, mcc_alert = raise_alerts(card, 5_000, subject_id="auth_1")
    [transfer_alert] = raise_alerts(
        card, 2_000, merchant=None, subject_type="transfer", subject_id=None
    )
    reviewer = User.objects.create_user("earlier", is_staff=True)
    alert_resolve(alert=mcc_alert, user=reviewer, note="Grocery store, fine.")
    other_fi = make_institution()
    threshold(other_fi, amount=1)
    [foreign] = raise_alerts(active_card(other_fi), 2)
    return {
        "fi": fi,
        "card": card,
        **rules,
        "threshold_alert": refreshed(threshold_alert),
        "mcc_alert": refreshed(mcc_alert),
        "transfer_alert": refreshed(transfer_alert),
        "foreign": refreshed(foreign),
    }


# --- pages ----------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [MonitoringRule, MonitoringAlert], ids=lambda m: m.__name__)
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


def test_alert_pages_show_the_masked_pan_never_the_pan(admin_client, world):
    card = Card.objects.get(pk=world["card"].pk)
    pan = card.pan()
    html = admin_client.get(url(MonitoringAlert)).content.decode()
    assert card.masked_pan in html and url(Card, "change", card.pk) in html
    assert pan not in html
    alert = world["threshold_alert"]
    html = admin_client.get(url(MonitoringAlert, "change", alert.pk)).content.decode()
    for text in [
        card.masked_pan,
        url(Card, "change", card.pk),
        url(MonitoringRule, "change", alert.rule_id),
        "50.00 EUR",
        "authorization auth_1",
        '<th scope="row">threshold amount</th><td>10.00 EUR</td>',  # fields, not JSON
        "Corner Shop",
        f"{url(Event)}?object_id={alert.pk}",
    ]:
        assert text in html, text
    assert pan not in html
    html = admin_client.get(url(MonitoringAlert, "change", world["transfer_alert"].pk)).content
    assert b"transfer (refused, no id)" in html
    html = admin_client.get(url(MonitoringAlert, "change", world["mcc_alert"].pk)).content
    assert b"Grocery store, fine." in html and b"earlier" in html


def test_alert_filters(admin_client, world):
    def ids(params):
        response = admin_client.get(url(MonitoringAlert), params)
        return {alert.pk for alert in response.context["cl"].result_list}

    fi = world["fi"]
    assert ids({"status__exact": "resolved"}) == {world["mcc_alert"].pk}
    assert ids({"action__exact": "decline", "institution__id__exact": fi.pk}) == {
        world["threshold_alert"].pk,
        world["transfer_alert"].pk,
    }
    assert ids({"kind": "blocked_mcc"}) == {world["mcc_alert"].pk}
    assert ids({"institution__id__exact": world["foreign"].institution_id}) == {world["foreign"].pk}
    titles = [
        spec.title for spec in admin_client.get(url(MonitoringAlert)).context["cl"].filter_specs
    ]
    # "assigned to": the case work's "mine" queue (tests/backoffice/test_case_work.py).
    assert titles == ["assigned to", "status", "action", "kind", "institution"]


def test_rule_list_shows_parameters_in_api_names(admin_client, world):
    html = admin_client.get(url(MonitoringRule)).content.decode()
    for text in [
        "riskLevel=low amount=10.00 EUR",
        "windowSeconds=3600 maxCount=5",
        "windowSeconds=600 maxAmount=10,000.00 EUR",
        # Merchant categories and countries by name (backoffice.names), the categories' codes
        # beside them; the kinds in words.
        "mccs=Groceries and supermarkets (5411); Betting, including lottery tickets",
        "countries=North Korea",
        "one payment over an amount",
        "too many payments in a window",
        "a blocked merchant category",
    ]:
        assert text in html, text
    assert '<td class="field-kind_display">a blocked merchant category</td>' in html


# --- resolve --------------------------------------------------------------------------------
def test_resolve_asks_for_a_note_then_resolves_through_the_service(admin_client, admin_user, world):
    alert, transfer_alert = world["threshold_alert"], world["transfer_alert"]
    page = start_action(admin_client, MonitoringAlert, "resolve_alerts", alert, transfer_alert)
    assert page.status_code == 200
    assert page.templates[0].name == TEMPLATE
    html = page.content.decode()
    assert 'name="note"' in html and world["card"].masked_pan in html
    assert refreshed(alert).status == "open"  # only the confirmation changes anything

    response = confirm(admin_client, page, "  Cardholder confirmed both payments. ")
    assert response.redirect_chain[-1][0] == url(MonitoringAlert)
    assert messages_of(response) == [("success", "Resolved 2 alert(s).")]
    for each in (alert, transfer_alert):
        stored = refreshed(each)
        assert (stored.status, stored.resolved_by, stored.resolution_note) == (
            "resolved",
            admin_user,
            "Cardholder confirmed both payments.",
        )
        entry = LogEntry.objects.get(object_id=each.pk)
        assert (entry.action_flag, entry.user, entry.content_type.model) == (
            CHANGE,
            admin_user,
            "monitoringalert",
        )
        assert entry.get_change_message() == (
            "Resolved (admin action “Resolve”; note: “Cardholder confirmed both payments.”)."
        )
    assert Event.objects.filter(type="monitoring.alert_resolved").count() == 3


def test_resolve_needs_a_note(admin_client, world):
    alert = world["threshold_alert"]
    page = start_action(admin_client, MonitoringAlert, "resolve_alerts", alert)
    response = confirm(admin_client, page, "   ")
    assert response.templates[0].name == TEMPLATE
    assert response.context["form"].errors == {"note": ["This field is required."]}
    assert refreshed(alert).status == "open"
    assert not LogEntry.objects.exists()


def test_resolving_a_resolved_alert_is_an_error_and_changes_nothing(
    admin_client, admin_user, world
):
    resolved, open_alert = world["mcc_alert"], world["threshold_alert"]
    page = start_action(admin_client, MonitoringAlert, "resolve_alerts", resolved, open_alert)
    response = confirm(admin_client, page, "Reviewed.")
    assert messages_of(response) == [
        ("error", f"{resolved.pk}: The alert is already resolved."),
        ("success", "Resolved 1 alert(s)."),
    ]
    stored = refreshed(resolved)
    assert (stored.resolution_note, stored.resolved_by.username) == (
        "Grocery store, fine.",
        "earlier",
    )
    assert not LogEntry.objects.filter(object_id=resolved.pk).exists()
    assert LogEntry.objects.get(object_id=open_alert.pk).user == admin_user


def test_staff_without_change_permission_cannot_resolve(client, world):
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(
        Permission.objects.get(codename="view_monitoringalert"),
        Permission.objects.get(codename="view_monitoringrule"),
    )
    sign_in(client, viewer)
    response = client.get(url(MonitoringAlert))
    assert response.status_code == 200
    assert response.context["action_form"] is None or "resolve_alerts" not in [
        name for name, _ in response.context["action_form"].fields["action"].choices
    ]
    alert = world["threshold_alert"]
    start_action(client, MonitoringAlert, "resolve_alerts", alert)
    assert refreshed(alert).status == "open"


# --- rules: enable, disable -----------------------------------------------------------------
def test_disable_and_enable_rules_through_the_service(admin_client, admin_user, world):
    count, country = world["count"], world["country"]
    response = start_action(admin_client, MonitoringRule, "disable_rules", count, country)
    assert messages_of(response) == [
        ("success", "Disabled 1 rule(s)."),
        ("info", f"Already disabled, left as they were: {country.pk}."),
    ]
    assert refreshed(count).enabled is False
    entry = LogEntry.objects.get(object_id=count.pk)
    assert (entry.user, entry.get_change_message()) == (
        admin_user,
        "Disabled (admin action “Disable”).",
    )
    assert not LogEntry.objects.filter(object_id=country.pk).exists()
    events = Event.objects.filter(type="monitoring.rule_updated", object_id=count.pk)
    assert [event_payload(event)["data"] for event in events] == [
        {"ruleId": count.pk, "changedFields": ["enabled"]}
    ]

    response = start_action(admin_client, MonitoringRule, "enable_rules", count, country)
    assert messages_of(response) == [("success", "Enabled 2 rule(s).")]
    assert refreshed(count).enabled and refreshed(country).enabled
    assert LogEntry.objects.filter(object_id=count.pk).count() == 2
    assert LogEntry.objects.get(object_id=country.pk).get_change_message() == (
        "Enabled (admin action “Enable”)."
    )
