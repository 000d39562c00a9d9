"""The staff roles the migration makes (institutions/migrations/0003_staff_roles.py): exact
permissions, and exactly the admin actions each role is offered (docs/back-office.md)."""

import pytest
from django.contrib.auth.models import Group

from tests.backoffice.helpers import restore_roles, staff
from tests.events.test_actor import admin_actions

pytestmark = pytest.mark.django_db

VIEWED = {
    "institutions.view_institution",
    "events.view_event",
    "customers.view_customer",
    "accounts.view_accountproduct",
    "accounts.view_account",
    "accounts.view_hold",
    "accounts.view_journal",
    "accounts.view_entry",
    "accounts.view_adjustment",
    "accounts.view_fee",
    "accounts.view_statementline",
    "cards.view_cardproduct",
    "cards.view_card",
    "cards.view_sensitivedetailsaccess",
    "cards.view_pinunblock",
    "cards.view_panresolutionfailure",
    "monitoring.view_monitoringrule",
    "monitoring.view_monitoringalert",
    "transfers.view_transfer",
    "transfers.view_transferbatch",
    "authorizations.view_authorization",
    "authorizations.view_cardreturn",
    "webhooks.view_webhookendpoint",
    "webhooks.view_webhookdelivery",
    # Granted by decisioning/migrations/0002_staff_roles_view.py.
    "decisioning.view_decisioningendpoint",
    # Granted by authorizations/migrations/0009_staff_roles_view_increments.py.
    "authorizations.view_authorizationincrement",
    # Granted by institutions/migrations/0006_staff_roles_view_holidays.py.
    "institutions.view_holiday",
    # Granted by disputes/migrations/0003_staff_roles.py.
    "disputes.view_dispute",
    "disputes.view_disputestep",
    "disputes.view_disputedeadline",
    # Granted by payments/migrations/0003_staff_roles.py.
    "payments.view_paymentorder",
    "payments.view_externalaccount",
    "payments.view_railfile",
    "payments.view_railnotice",
    "payments.view_inboundentry",
    "payments.view_railjournal",
    "payments.view_achprofile",
    # Granted by payments/migrations/0005_stop_payment_roles.py.
    "payments.view_stoppayment",
    # Granted by payments/migrations/0009_sepa_staff_roles.py.
    "payments.view_sepaprofile",
    "payments.view_mandate",
    # Granted by reconciliation/migrations/0002_staff_roles.py.
    "reconciliation.view_bankstatement",
    "reconciliation.view_bankstatementline",
    # Granted by reconciliation/migrations/0004_network_settlement_roles.py.
    "reconciliation.view_networksettlement",
    "reconciliation.view_networksettlementrow",
    # Granted by reconciliation/migrations/0006_staff_roles_matching.py.
    "reconciliation.view_expectedpayment",
    "reconciliation.view_reconciliationrule",
    "reconciliation.view_reconciliationbreak",
    # Granted by backoffice/migrations/0003_staff_roles.py.
    "backoffice.view_approvalrequest",
    # Granted by backoffice/migrations/0005_staff_roles_thresholds.py.
    "backoffice.view_approvalthreshold",
    # Granted by backoffice/migrations/0016_interest_roles.py.
    "interest.view_interestterms",
    "interest.view_interestaccrual",
    # Granted by backoffice/migrations/0018_interest_posting_roles.py.
    "interest.view_interestposting",
    "interest.view_interestadjustment",
    # Granted by backoffice/migrations/0017_sepa_register_and_recall_roles.py.
    "payments.view_debtormandate",
    "payments.view_blockedcreditor",
    "payments.view_recall",
    "payments.view_inboundrecall",
}
# Every role may protect a card (freeze, unfreeze, block lost or stolen): granted by
# cards/migrations/0014_protect_card.py (docs/back-office.md, "Roles").
PROTECTIVE = {"cards.protect_card"}
PROTECTIVE_ACTIONS = {
    ("cards.card", "freeze_cards"),
    ("cards.card", "unfreeze_cards"),
    ("cards.card", "block_cards"),
}


def permissions_of(name: str) -> set[str]:
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name=name).permissions.select_related("content_type")
    }


def test_the_roles_have_exact_permissions():
    assert permissions_of("support") == VIEWED | PROTECTIVE
    assert permissions_of("operations") == VIEWED | PROTECTIVE | {
        "cards.change_card",
        "accounts.change_account",
        "accounts.change_hold",
        "disputes.change_dispute",
        "payments.change_paymentorder",
        "payments.change_externalaccount",
        "payments.change_inboundentry",
        "reconciliation.change_reconciliationbreak",  # the breaks' work
    }
    assert permissions_of("compliance") == VIEWED | PROTECTIVE | {
        "monitoring.change_monitoringalert",
        "accounts.change_fee",
        "backoffice.change_approvalrequest",  # four eyes: compliance decides
        "backoffice.view_staffactivity",  # the audit page (backoffice/migrations/0010_*)
    }


def test_each_role_is_offered_exactly_its_actions():
    assert admin_actions(staff("support", roles=["support"])) == PROTECTIVE_ACTIONS
    assert admin_actions(staff("operations", roles=["operations"])) == PROTECTIVE_ACTIONS | {
        ("cards.card", "activate_cards"),
        ("cards.card", "suspend_cards"),
        ("cards.card", "close_cards"),
        ("cards.card", "unblock_pins"),  # above the threshold: compliance approves
        ("cards.card", "change_limits"),  # a raise above the threshold: compliance approves
        ("accounts.account", "freeze_accounts"),
        ("accounts.account", "activate_accounts"),
        ("accounts.account", "close_accounts"),
        ("accounts.account", "request_adjustment"),  # four eyes: compliance approves
        ("accounts.account", "change_overdraft_limit"),  # a raise: as above
        ("accounts.hold", "release_holds"),
        ("disputes.dispute", "submit"),
        ("disputes.dispute", "grant_credit"),
        ("disputes.dispute", "deny"),
        ("disputes.dispute", "withdraw"),
        ("disputes.dispute", "write_off"),
        ("disputes.dispute", "cardholder_bears"),
        ("payments.paymentorder", "approve_orders"),  # the key asked: a person approves
        ("payments.paymentorder", "cancel_orders"),
        ("payments.externalaccount", "verify_external_accounts"),
        ("payments.inboundentry", "apply_from_suspense"),  # four eyes: compliance approves
        ("payments.inboundentry", "return_from_suspense"),  # as above
        # Case work on the disputes they move (docs/back-office.md, "Case work").
        ("disputes.dispute", "add_notes"),
        ("disputes.dispute", "assign_to_me"),
        ("disputes.dispute", "assign"),
        # The reconciliation breaks' work (docs/reconciliation.md, "The breaks' work").
        ("reconciliation.reconciliationbreak", "add_notes"),
        ("reconciliation.reconciliationbreak", "assign_to_me"),
        ("reconciliation.reconciliationbreak", "assign"),
        ("reconciliation.reconciliationbreak", "book_credit"),  # four eyes: compliance approves
        ("reconciliation.reconciliationbreak", "book_fee"),  # as above
        ("reconciliation.reconciliationbreak", "force_post"),  # as above
        ("reconciliation.reconciliationbreak", "place_credit"),  # as above
        ("reconciliation.reconciliationbreak", "resolve_without_money"),
    }
    assert admin_actions(staff("compliance", roles=["compliance"])) == PROTECTIVE_ACTIONS | {
        ("monitoring.monitoringalert", "resolve_alerts"),
        ("monitoring.monitoringalert", "add_notes"),  # case work on the alerts they resolve
        ("monitoring.monitoringalert", "assign_to_me"),
        ("monitoring.monitoringalert", "assign"),
        ("accounts.fee", "waive_fees"),  # asks; another compliance officer approves
        ("backoffice.approvalrequest", "approve_requests"),
        ("backoffice.approvalrequest", "reject_requests"),
    }


def test_no_role_adds_deletes_or_edits_a_row_through_a_form():
    for role in ("support", "operations", "compliance"):
        codenames = {name.split(".")[1] for name in permissions_of(role)}
        assert not {c for c in codenames if c.startswith(("add_", "delete_"))}, role


def test_restore_roles_gives_back_what_the_migrations_granted():
    """The transactional tests empty the tables and restore the roles with `restore_roles`:
    it must make the groups the migrations made, not fewer permissions."""
    migrated = {
        group.name: set(group.permissions.values_list("content_type__app_label", "codename"))
        for group in Group.objects.all()
    }
    for group in Group.objects.all():
        group.permissions.clear()
    restore_roles()
    restored = {
        group.name: set(group.permissions.values_list("content_type__app_label", "codename"))
        for group in Group.objects.all()
    }
    for name in migrated:
        assert (migrated[name] - restored[name], restored[name] - migrated[name]) == (
            set(),
            set(),
        ), name
