"""A change of balances reads its events' webhook endpoints in the posting function's own
statement (`events.consumers.Lookup`, `webhooks.services.scheduling.ENDPOINTS`): the same
deliveries as a read of their own would schedule, no statement more."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.accounts.api.helpers import created, funded_account, open_account
from tests.factories import InstitutionFactory
from tests.webhooks.test_schedule import endpoint, job_rows
from transfers.models import Transfer
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db


def own_reads(queries) -> list[str]:
    """The statements that read the endpoints apart from the posting function's."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if 'FROM "webhooks_webhookendpoint"' in q["sql"] and "SELECT tx_post" not in q["sql"]
    ]


def transfer(api, source, destination, amount=5):
    body = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": amount,
        "currency": "EUR",
    }
    return created(api.post("/transfers", body), "v2")


def test_a_transfer_schedules_its_subscribers_deliveries_with_no_read_of_its_own(
    api_v2, institution
):
    source = funded_account(api_v2, 100)["accountId"]
    destination = open_account(api_v2)["accountId"]
    wanted = [
        endpoint(institution, ["transfer.posted"]),
        endpoint(institution, ["*"]),
    ]
    endpoint(institution, ["transfer.posted"], enabled=False)
    endpoint(institution, ["account.opened"])  # another type
    endpoint(InstitutionFactory(), ["*"])  # another institution
    WebhookDelivery.objects.all().delete()
    with CaptureQueriesContext(connection) as queries:
        posted = transfer(api_v2, source, destination)
    assert own_reads(queries) == []
    deliveries = WebhookDelivery.objects.select_related("event").order_by("endpoint_id")
    assert [(d.endpoint_id, d.event.object_id) for d in deliveries] == [
        (e.pk, posted["transferId"]) for e in sorted(wanted, key=lambda e: e.pk)
    ]
    assert {d.event.type for d in deliveries} == {"transfer.posted"}
    assert sorted(lock for _, _, lock, *_ in job_rows() if posted["transferId"] in lock) == sorted(
        f"webhook:{e.pk}:transfer:{posted['transferId']}" for e in wanted
    )


def test_a_batch_schedules_the_written_items_deliveries_only(api_v2, institution):
    accounts = [funded_account(api_v2, 10)["accountId"] for _ in range(2)]
    subscribed = endpoint(institution, ["transfer.posted"])
    WebhookDelivery.objects.all().delete()
    body = {
        "mode": "independent",
        "transfers": [
            {
                "source": {"accountId": accounts[0]},
                "destination": {"accountId": accounts[1]},
                "amount": amount,
                "currency": "EUR",
            }
            for amount in (3, 1_000, 4)  # the second is refused: more than the source holds
        ],
    }
    with CaptureQueriesContext(connection) as queries:
        answer = created(api_v2.post("/transfer-batches", body), "v2")
    assert own_reads(queries) == []
    posted = [r["transferId"] for r in answer["results"] if r["status"] == "posted"]
    assert len(posted) == 2
    assert sorted(
        WebhookDelivery.objects.filter(endpoint=subscribed).values_list(
            "event__object_id", flat=True
        )
    ) == sorted(posted)
    assert Transfer.objects.filter(pk__in=posted).count() == 2


def test_without_a_subscriber_a_transfer_writes_no_delivery(api_v2, institution):
    source = funded_account(api_v2, 100)["accountId"]
    destination = open_account(api_v2)["accountId"]
    endpoint(institution, ["account.opened"])
    WebhookDelivery.objects.all().delete()
    transfer(api_v2, source, destination)
    assert not WebhookDelivery.objects.exists()
