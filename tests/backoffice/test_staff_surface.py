"""The staff surface as staff meet it: every model registered in the admin, the actions its
admin offers a superuser (name and label, in their order: a row's page shows them as buttons in
that order) and which of add, change and delete its forms allow.

Issue 48 moves every admin module into the back office and every staff write into declared
actions (docs/back-office.md, "Where it lives" and "Staff actions"); this listing was taken
from the code before the move and must stay the same after it: the same models, the same
actions, the same forms. A change to it is a change of what staff can do, made on purpose,
here too.

And docs/back-office.md lists every declared staff action and form write as the declarations
say (`backoffice.actions.catalogue`, printed by `manage.py staff_actions`).
"""

from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import RequestFactory

from backoffice.actions.catalogue import markdown

pytestmark = pytest.mark.django_db

# model -> [(action name, its label)], as `get_actions()` returns them for a superuser.
ACTIONS = {
    "accounts.account": [
        (
            "freeze_accounts",
            "Freeze selected accounts (no money can leave them; asks for a reason)",
        ),
        ("activate_accounts", "Unfreeze (activate) selected accounts (asks for a reason)"),
        (
            "close_accounts",
            "Close selected accounts (zero balance and no active hold; final; asks for a reason)",
        ),
        (
            "request_adjustment",
            "Adjust (load or unload; above the threshold another staff user approves)",
        ),
        (
            "change_overdraft_limit",
            "Change the overdraft limit (a raise above the threshold: another staff user approves)",
        ),
    ],
    "accounts.accountproduct": [],
    "accounts.adjustment": [],
    "accounts.entry": [],
    "accounts.fee": [
        (
            "waive_fees",
            "Waive selected fees (asks for a reason; above the threshold another staff "
            "user approves)",
        ),
    ],
    "accounts.hold": [
        ("release_holds", "Release selected holds (give the amount back; asks for a reason)"),
    ],
    "accounts.journal": [],
    "accounts.statementline": [],
    "api.idempotencyrecord": [],
    "auth.group": [
        ("delete_selected", "Delete selected %(verbose_name_plural)s"),
    ],
    "auth.user": [
        ("delete_selected", "Delete selected %(verbose_name_plural)s"),
    ],
    "authorizations.authorization": [],
    "authorizations.authorizationincrement": [],
    "authorizations.cardreturn": [],
    "axes.accessattempt": [
        ("delete_selected", "Delete selected %(verbose_name_plural)s"),
        ("cleanup_expired_attempts", "Clean up expired attempts"),
    ],
    "axes.accessfailurelog": [
        ("delete_selected", "Delete selected %(verbose_name_plural)s"),
    ],
    "axes.accesslog": [
        ("delete_selected", "Delete selected %(verbose_name_plural)s"),
    ],
    "backoffice.approvalrequest": [
        ("approve_requests", "Approve selected requests (the change is made now)"),
        ("reject_requests", "Reject selected requests (nothing moves)"),
    ],
    "backoffice.approvalthreshold": [],
    "backoffice.signinlockout": [],
    "backoffice.staffactivity": [],  # the audit page (issue 48 item 6): read-only
    "backoffice.staffevent": [],
    "cards.card": [
        ("activate_cards", "Activate selected cards (asks for a reason)"),
        ("suspend_cards", "Suspend selected cards (asks for a reason)"),
        ("close_cards", "Close selected cards (final; asks for a reason)"),
        (
            "unblock_pins",
            "Unblock the PIN of selected cards (asks for a reason; above the threshold "
            "another staff user approves)",
        ),
        (
            "change_limits",
            "Change the limits (a raise above the threshold: another staff user approves)",
        ),
        # Issue 48 item 3: the protective actions every role may run, support included.
        (
            "freeze_cards",
            "Freeze selected cards (suspend: payments are declined until unfrozen; asks for a "
            "reason code)",
        ),
        ("unfreeze_cards", "Unfreeze selected frozen cards (asks for a reason code)"),
        (
            "block_cards",
            "Block selected cards as lost or stolen (final; asks for a reason code)",
        ),
    ],
    "cards.cardproduct": [],
    "cards.panresolutionfailure": [],
    "cards.pinunblock": [],
    "cards.sensitivedetailsaccess": [],
    "customers.customer": [],
    "decisioning.decisioningendpoint": [],
    "disputes.dispute": [
        (
            "submit",
            "Submit (credits the cardholder provisionally, unless the product credits by "
            "the deadline)",
        ),
        ("grant_credit", "Grant the provisional credit now"),
        ("deny", "Deny (reverses the provisional credit)"),
        ("withdraw", "Withdraw (reverses the provisional credit)"),
        ("write_off", "Accept the loss: write it off"),
        (
            "cardholder_bears",
            "Accept the loss: the cardholder bears it (reverses that much credit)",
        ),
        # Issue 48 item 4: case work.
        ("add_notes", "Add a note to selected disputes (asks for the note)"),
        ("assign_to_me", "Assign selected disputes to me"),
        ("assign", "Assign selected disputes to a colleague, or to nobody"),
    ],
    "events.event": [],
    "institutions.apikey": [
        ("revoke_keys", "Revoke selected API keys (at once)"),
        ("rotate_keys", "Rotate selected API keys (new key; the old one works for a grace period)"),
        (
            "rotate_keys_now",
            "Rotate selected API keys now (new key; the old one is revoked at once)",
        ),
    ],
    "institutions.holiday": [],
    "institutions.institution": [],
    "institutions.institutionaccess": [],
    "monitoring.monitoringalert": [
        ("resolve_alerts", "Resolve selected alerts (asks for a note)"),
        # Issue 48 item 4: case work.
        ("add_notes", "Add a note to selected alerts (asks for the note)"),
        ("assign_to_me", "Assign selected alerts to me"),
        ("assign", "Assign selected alerts to a colleague, or to nobody"),
    ],
    "monitoring.monitoringrule": [
        ("enable_rules", "Enable selected rules"),
        ("disable_rules", "Disable selected rules (they stop hitting)"),
    ],
    "procrastinate.procrastinatejob": [
        ("retry", "Retry Job"),
        ("cancel", "Cancel Job (only 'todo' jobs)"),
        ("abort", "Abort Job (includes 'todo' & 'doing' jobs)"),
    ],
    "transfers.transfer": [
        (
            "reverse_transfers",
            "Reverse selected transfers (full remaining amount; asks for a reason)",
        ),
    ],
    "transfers.transferbatch": [],
    # Issue 49's pages (docs/payments.md, "The back office").
    "payments.achprofile": [],
    "payments.externalaccount": [
        (
            "verify_external_accounts",
            "Verify selected external accounts (checked by other means than a prenote)",
        ),
    ],
    "payments.inboundentry": [
        (
            "apply_from_suspense",
            "Apply to an account (a credit in suspense; another staff user approves)",
        ),
        (
            "return_from_suspense",
            "Return to the originator (a credit in suspense; another staff user approves)",
        ),
    ],
    "payments.paymentorder": [
        (
            "approve_orders",
            "Approve selected payment orders (the key asked, you approve; asks for a reason)",
        ),
        (
            "cancel_orders",
            "Cancel selected payment orders not yet in a file (a credit's hold released)",
        ),
    ],
    "payments.railfile": [],
    "payments.railnotice": [],
    "payments.stoppayment": [],
    "payments.sepaprofile": [],
    "payments.mandate": [],
    # Issue 50's debtor register and recalls, read-only.
    "payments.debtormandate": [],
    "payments.blockedcreditor": [],
    "payments.recall": [],
    "payments.inboundrecall": [],
    "interest.interestaccrual": [],
    "interest.interestterms": [],
    # Issue 52's postings and adjustments, read-only.
    "interest.interestposting": [],
    "interest.interestadjustment": [],
    "reconciliation.bankstatement": [],
    "reconciliation.bankstatementline": [],
    "reconciliation.networksettlement": [],
    "reconciliation.networksettlementrow": [],
    "reconciliation.expectedpayment": [],
    "reconciliation.reconciliationbreak": [
        # Issue 51 item 5: the breaks' work.
        ("book_credit", "Book a bank-only credit to suspense (another staff user approves)"),
        ("book_fee", "Book a bank fee (another staff user approves)"),
        ("force_post", "Force post a late presentment (another staff user approves)"),
        (
            "place_credit",
            "Place a credit booked to suspense on an account (another staff user approves)",
        ),
        (
            "resolve_without_money",
            "Resolve selected breaks of amount 0 (no money moves; asks for a reason)",
        ),
        ("add_notes", "Add a note to selected breaks (asks for the note)"),
        ("assign_to_me", "Assign selected breaks to me"),
        ("assign", "Assign selected breaks to a colleague, or to nobody"),
    ],
    "reconciliation.reconciliationrule": [],
    "webhooks.webhookdelivery": [
        ("retry_deliveries", "Retry selected failed deliveries"),
    ],
    "webhooks.webhookendpoint": [
        ("enable_endpoints", "Enable selected endpoints"),
        ("disable_endpoints", "Disable selected endpoints (no new deliveries; pending ones fail)"),
    ],
}

# model -> which of its admin's add, change and delete a superuser has (no object given).
FORMS = {
    "accounts.account": "change",
    "accounts.accountproduct": "add change",
    "accounts.adjustment": "",
    "accounts.entry": "",
    "accounts.fee": "change",
    "accounts.hold": "change",
    "accounts.journal": "",
    "accounts.statementline": "",
    "api.idempotencyrecord": "",
    "auth.group": "add change delete",
    "auth.user": "add change delete",
    "authorizations.authorization": "",
    "authorizations.authorizationincrement": "",
    "authorizations.cardreturn": "",
    "axes.accessattempt": "change delete",
    "axes.accessfailurelog": "change delete",
    "axes.accesslog": "change delete",
    "backoffice.approvalrequest": "change",
    "backoffice.approvalthreshold": "add change delete",
    "backoffice.signinlockout": "",
    "backoffice.staffactivity": "",
    "backoffice.staffevent": "",
    "cards.card": "change",
    "cards.cardproduct": "add change",
    "cards.panresolutionfailure": "",
    "cards.pinunblock": "",
    "cards.sensitivedetailsaccess": "",
    "customers.customer": "change",
    "decisioning.decisioningendpoint": "",
    "disputes.dispute": "change",
    "events.event": "",
    "institutions.apikey": "add change",
    "institutions.holiday": "add change delete",
    "institutions.institution": "add",
    "institutions.institutionaccess": "add change delete",
    "monitoring.monitoringalert": "change",
    "monitoring.monitoringrule": "change",
    "payments.achprofile": "",
    "payments.externalaccount": "change",
    "payments.inboundentry": "change",
    "payments.paymentorder": "change",
    "payments.railfile": "",
    "payments.railnotice": "",
    "payments.stoppayment": "",
    "payments.sepaprofile": "",
    "payments.mandate": "",
    "payments.debtormandate": "",
    "payments.blockedcreditor": "",
    "payments.recall": "",
    "payments.inboundrecall": "",
    "interest.interestaccrual": "",
    "interest.interestterms": "",
    "interest.interestposting": "",
    "interest.interestadjustment": "",
    "reconciliation.bankstatement": "",
    "reconciliation.bankstatementline": "",
    "reconciliation.networksettlement": "",
    "reconciliation.networksettlementrow": "",
    "reconciliation.expectedpayment": "",
    "reconciliation.reconciliationbreak": "change",
    "reconciliation.reconciliationrule": "",
    "procrastinate.procrastinatejob": "",
    "transfers.transfer": "change",
    "transfers.transferbatch": "change",
    "webhooks.webhookdelivery": "change",
    "webhooks.webhookendpoint": "change",
}


def superuser_request(admin_user):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    return request


def registered():
    return sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label_lower)


def test_every_registered_model_offers_the_same_actions(admin_user):
    request = superuser_request(admin_user)
    assert {
        model._meta.label_lower: [
            (name, str(description))
            for name, (_function, _name, description) in model_admin.get_actions(request).items()
        ]
        for model, model_admin in registered()
    } == ACTIONS


def test_every_registered_model_has_the_same_forms(admin_user):
    request = superuser_request(admin_user)
    assert {
        model._meta.label_lower: " ".join(
            what
            for what in ("add", "change", "delete")
            if getattr(model_admin, f"has_{what}_permission")(request)
        )
        for model, model_admin in registered()
    } == FORMS


def test_the_back_office_document_lists_the_declared_staff_actions():
    text = (Path(settings.BASE_DIR) / "docs" / "back-office.md").read_text()
    listed = text.split("<!-- staff actions: start -->\n", 1)[1]
    listed = listed.split("<!-- staff actions: end -->", 1)[0]
    # On a difference: `manage.py staff_actions` prints the table to paste in its place.
    assert listed == markdown()
    assert "| cards.Card | `unblock_pins`: " in listed  # the table is the declarations'
