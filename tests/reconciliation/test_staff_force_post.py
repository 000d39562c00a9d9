"""The staff action of a force post (docs/reconciliation.md, "Force post of a late
presentment"): asked on the breaks' queue by one staff user, approved by another under
Approvals, posted once as the approver; never by the same user; only a network-only break; an
institution's breaks seen by its own staff only."""

import pytest
from django.urls import reverse

from accounts.models import Entry
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from backoffice.models import ApprovalRequest
from backoffice.services.approvals import approval_approve
from backoffice.services.staff_changes import staff_book_break
from core.actors import Actor
from core.exceptions import InvalidStateTransition, PermissionDenied
from core.operations import run
from events.models import Event
from reconciliation.models import ReconciliationBreak
from reconciliation.services.settlement_matching import settlement_proof
from tests.backoffice.helpers import staff
from tests.backoffice.test_case_work import act, listed, messages_of
from tests.factories import InstitutionFactory
from tests.jobs.helpers import authorizations
from tests.reconciliation.test_settlements import late_presentment
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

BREAKS = reverse("admin:reconciliation_reconciliationbreak_changelist")
FORCE_POST = ApprovalRequest.Kind.BREAK_FORCE_POST


def test_a_force_post_is_asked_by_one_and_approved_by_another_once(client):
    [pending] = authorizations(600)
    bank = pending.institution
    late = late_presentment(bank, pending.pk, 600)
    # A break of another kind on the same settlement (of no difference: the proof unchanged).
    other_kind = ReconciliationBreak.objects.create(
        institution=bank,
        kind="amount_mismatch",
        amount=0,
        currency="EUR",
        settlement=late.settlement,
        run=late.run,
    )
    maker = staff("olga", roles=["operations"], institutions=[bank])
    checker = staff("carla", roles=["compliance"], institutions=[bank])

    # Asked on the queue: a request, nothing presented yet.
    sign_in(client, maker)
    act(client, BREAKS, "force_post", late.pk, reason="The network settled it yesterday.")
    [approval] = ApprovalRequest.objects.all()
    assert (approval.kind, approval.target_id, approval.amount, approval.currency) == (
        FORCE_POST,
        late.pk,
        600,
        "EUR",
    )
    [asked] = Event.objects.filter(type="approval.requested")
    assert (asked.actor_type, asked.actor_id) == ("staff", str(maker.pk))
    assert Authorization.objects.get(pk=pending.pk).status == "pending"

    # Another kind is left out on the queue, and refused by the service with why.
    act(client, BREAKS, "force_post", other_kind.pk, reason="Try.")
    assert any(
        "Not an open network-only break (a late presentment)" in m and other_kind.pk in m
        for m in messages_of(client, BREAKS)
    )
    with pytest.raises(InvalidStateTransition, match="Only a network-only break"):
        run(staff_book_break, actor=Actor(user=maker), brk=other_kind, kind=FORCE_POST, reason="x")
    assert ApprovalRequest.objects.count() == 1

    # The requester cannot approve their own: nothing posted.
    with pytest.raises(PermissionDenied):
        run(approval_approve, actor=Actor(user=maker), approval=approval, reason="Mine.")
    assert Authorization.objects.get(pk=pending.pk).status == "pending"

    # The checker finds it under Approvals in words, approves it: posted as them, once.
    client.logout()
    sign_in(client, checker)
    page = client.get(reverse("admin:backoffice_approvalrequest_change", args=[approval.pk]))
    assert "Force post the late presentment of" in page.content.decode()
    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Checked.")
    with pytest.raises(InvalidStateTransition):
        run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Again.")
    with pytest.raises(InvalidStateTransition):  # nor asked again
        run(staff_book_break, actor=Actor(user=maker), brk=late, kind=FORCE_POST, reason="x")
    presented = Authorization.objects.get(pk=pending.pk)
    assert (presented.status, presented.presented_amount) == ("presented", 600)
    late.refresh_from_db()
    assert (late.state, late.resolution) == ("resolved", "force_posted")
    [resolved] = Event.objects.filter(object_id=late.pk, type="reconciliation_break.resolved")
    assert (resolved.actor_type, resolved.actor_id) == ("staff", str(checker.pk))
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by_id, approval.result_id) == (
        "approved",
        checker.pk,
        late.pk,
    )
    cleared = Entry.objects.filter(account__internal_code="card_clearing").exclude(
        journal__kind="network_settlement"
    )
    assert cleared.count() == 1
    # The settlement's proof holds, the force post counted; the books balance.
    assert settlement_proof(late.settlement)["holds"] is True
    assert ledger_breaches() == []

    # Another institution's staff sees none of the breaks and asks nothing.
    client.logout()
    sign_in(client, staff("otto", roles=["operations"], institutions=[InstitutionFactory()]))
    assert listed(client, BREAKS) == []
    assert client.get(f"{BREAKS}{late.pk}/change/").status_code in (302, 404)
    act(client, BREAKS, "force_post", other_kind.pk, reason="Not mine.")
    assert ApprovalRequest.objects.count() == 1
