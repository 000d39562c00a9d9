"""A staff user limited to some institutions sees and acts on their rows only, on every admin
(docs/back-office.md). The admins are not listed by hand: `admin.site._registry` is walked, so
an admin added later is checked here the day it is registered."""

import pytest
from django.contrib import admin
from django.contrib.admin import RelatedOnlyFieldListFilter
from django.contrib.auth.models import Permission
from django.urls import reverse

from backoffice.kit import InstitutionLimit
from cards.models import Card
from institutions.models import Institution, InstitutionAccess
from monitoring.models import MonitoringAlert
from tests.backoffice.helpers import populated, request_of, staff
from tests.cards.helpers import make_institution
from tests.events.test_actor import _ours, run_action
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

# Models the admin shows that belong to no institution: named here, on purpose.
NOT_INSTITUTION_BOUND: set[str] = {
    "backoffice.SignInLockout",  # a staff username's lockouts
    "backoffice.StaffEvent",  # a staff account's security events
}


def registered():
    return [
        (model, model_admin) for model, model_admin in admin.site._registry.items() if _ours(model)
    ]


@pytest.fixture
def two_worlds(django_user_model):
    mine, theirs = make_institution(), make_institution()
    worlds = {mine: populated(mine), theirs: populated(theirs)}
    # A grant in each institution, so the grants' own admin has rows on both sides.
    InstitutionAccess.objects.create(
        user=django_user_model.objects.create_user("someone", is_staff=True), institution=theirs
    )
    return mine, theirs, worlds


def test_every_admin_of_ours_has_the_institution_limit():
    for model, model_admin in registered():
        assert isinstance(model_admin, InstitutionLimit), model._meta.label
        if model_admin.get_institution_path() is None:
            assert model._meta.label in NOT_INSTITUTION_BOUND, (
                f"{model._meta.label}: set `institution_path` on its admin"
            )


def test_every_admin_keeps_a_limited_user_to_their_institutions(two_worlds, admin_user):
    mine, theirs, _ = two_worlds
    limited = staff("limited", roles=["support"], institutions=[mine])
    nowhere = staff("nowhere", roles=["support"])
    everywhere = staff("everywhere", roles=["support"], everywhere=True)
    checked = []
    for model, model_admin in registered():
        path = model_admin.get_institution_path()
        if path is None:
            continue
        label = model._meta.label
        every = model_admin.get_queryset(request_of(admin_user))
        of_mine = set(every.filter(**{path: mine.pk}).values_list("pk", flat=True))
        of_theirs = set(every.filter(**{path: theirs.pk}).values_list("pk", flat=True))
        # Rows on both sides, or this check could not fail: add them to `populated`.
        assert of_mine or model is InstitutionAccess, f"no row of {label} in the world"
        assert of_theirs, f"no row of {label} in the world"

        def seen(user, model_admin=model_admin):
            return set(model_admin.get_queryset(request_of(user)).values_list("pk", flat=True))

        assert seen(limited) == of_mine, label
        assert seen(nowhere) == set(), label
        assert seen(everywhere) >= of_mine | of_theirs, label
        checked.append(label)
    assert len(checked) >= 25, checked


def test_pages_and_actions_of_another_institution_are_out_of_reach(client, two_worlds):
    mine, theirs, worlds = two_worlds
    sign_in(client, staff("ops", roles=["operations"], institutions=[mine]))
    my_card, their_card = worlds[mine]["card"], worlds[theirs]["card"]

    listed = client.get(reverse("admin:cards_card_changelist"))
    shown = {card.pk for card in listed.context["cl"].result_list}
    assert my_card in shown and their_card not in shown
    assert shown == set(Card.objects.filter(institution=mine).values_list("pk", flat=True))

    page = client.get(reverse("admin:cards_card_change", args=[their_card]))
    assert page.status_code == 302 and page.url == reverse("admin:index")  # "doesn't exist"
    history = client.get(reverse("admin:cards_card_history", args=[their_card]))
    assert history.status_code == 302
    assert client.get(reverse("admin:cards_card_change", args=[my_card])).status_code == 200

    run_action(client, "cards.card", "suspend_cards", their_card)
    assert Card.objects.get(pk=their_card).status == "active"
    run_action(client, "cards.card", "suspend_cards", my_card)
    assert Card.objects.get(pk=my_card).status == "suspended"


def test_a_limited_compliance_user_resolves_only_their_alerts(client, two_worlds):
    mine, theirs, _ = two_worlds
    sign_in(client, staff("compliance", roles=["compliance"], institutions=[mine]))
    for institution in (mine, theirs):
        alert = MonitoringAlert.objects.get(institution=institution)
        run_action(client, "monitoring.monitoringalert", "resolve_alerts", alert.pk)
    assert MonitoringAlert.objects.get(institution=mine).status == "resolved"
    assert MonitoringAlert.objects.get(institution=theirs).status == "open"


def test_forms_and_filters_offer_only_their_institutions(client, two_worlds):
    mine, theirs, _ = two_worlds
    third = make_institution()  # seeded with card products too
    user = staff("products", institutions=[mine, third])
    user.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["add_cardproduct", "view_cardproduct", "view_institution"]
        )
    )
    sign_in(client, user)

    form = client.get(reverse("admin:cards_cardproduct_add")).context["adminform"].form
    assert set(form.fields["institution"].queryset) == {mine, third}

    listed = client.get(reverse("admin:cards_cardproduct_changelist"))
    [institution_filter] = [
        spec for spec in listed.context["cl"].filter_specs if spec.title == "institution"
    ]
    assert isinstance(institution_filter, RelatedOnlyFieldListFilter)
    assert {pk for pk, _ in institution_filter.lookup_choices} == {mine.pk, third.pk}

    # A limited user may not add an institution: it would be outside their own.
    user.user_permissions.add(Permission.objects.get(codename="add_institution"))
    sign_in(client, type(user).objects.get(pk=user.pk))
    assert client.get(reverse("admin:institutions_institution_add")).status_code == 403
    assert {
        fi.pk
        for fi in client.get(reverse("admin:institutions_institution_changelist"))
        .context["cl"]
        .result_list
    } == {mine.pk, third.pk}
    assert Institution.objects.filter(pk=theirs.pk).exists()
