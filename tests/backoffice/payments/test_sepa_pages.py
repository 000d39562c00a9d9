"""The back office's SEPA pages (issue 50; docs/payments.md, "The back office"): the customer's
debtor register, TX's recalls of its transfers and other banks' recalls of the credits TX
received, each found by its exact id and its account, order or credit; and no payments page
shows an IBAN or an account number, only their last four."""

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils.formats import date_format

from accounts.models import Account
from payments.models import BlockedCreditor, DebtorMandate, InboundRecall, Recall, SepaProfile
from tests.backoffice.helpers import admin_pages, populated
from tests.payments.helpers import IBAN, IBAN_PRINTED

pytestmark = pytest.mark.django_db


def shown(admin_client, model, term: str) -> set[str]:
    opts = model._meta
    listed = admin_client.get(
        reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"), {"q": term}
    )
    return {row.pk for row in listed.context["cl"].result_list}


def test_the_sepa_pages_find_rows_by_exact_id_and_no_page_shows_an_iban(admin_client, institution):
    world = populated(institution)
    account = world["account"]
    recall = InboundRecall.objects.get(pk=world.inbound_recall)
    for model, pk, other in (
        (DebtorMandate, world.debtor_mandate, account),
        (BlockedCreditor, world.blocked_creditor, account),
        (Recall, world.recall, world.sepa_order),
        (InboundRecall, recall.pk, recall.inbound_entry_id),
    ):
        assert shown(admin_client, model, pk) == {pk}, model
        assert shown(admin_client, model, other) == {pk}, model
        assert shown(admin_client, model, pk[:-1]) == set(), model  # exact, not a prefix

    page = admin_client.get(reverse("admin:payments_inboundrecall_change", args=[recall.pk]))
    html = page.content.decode()
    assert recall.inbound_entry_id in html and "1.00 EUR" in html  # the credit it recalls
    assert date_format(recall.answer_due) in html  # the last day to answer

    # Every IBAN the world holds: the external accounts', the settlement account's, the
    # customer's account's (issued under the profile's bank code), and every account number.
    ibans = {IBAN, IBAN_PRINTED, SepaProfile.objects.get(institution=institution).settlement_iban}
    ibans.add(world.api.get(f"/accounts/{account}").json()["iban"])
    numbers = set(
        Account.objects.filter(institution=institution, kind="customer").values_list(
            "account_number", flat=True
        )
    )
    assert None not in ibans and len(numbers) >= 2
    payments = [
        item for item in admin.site._registry.items() if item[0]._meta.app_label == "payments"
    ]
    walked = 0
    for url, response in admin_pages(admin_client, institution, payments):
        html = response.content.decode()
        assert not [text for text in ibans | numbers if text in html], url
        walked += 1
    assert walked > 2 * len(payments)
