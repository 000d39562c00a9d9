"""Two-phase transfers resolve exactly once under concurrency: real threads, each with its own
client, database connection and committed transactions (docs/two-phase-transfers.md, "Locks").
Two resolutions of one transfer, a resolution racing the expiry job, and two expiry jobs at
once: one wins, the others change nothing, and the ledger stays whole."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Account, Hold
from accounts.verification import ledger_breaches
from events.models import Event
from jobs import tasks
from tests.accounts.api.helpers import CREATED, balances, funded_account, money
from tests.accounts.ledger.helpers import run_threads
from tests.conftest import Api
from transfers.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)

START = 10_000
RESOLUTION_EVENTS = ["transfer.posted", "transfer.voided", "transfer.expired"]


def pending(api, source: str, destination: str, amount: int) -> str:
    response = api.post(
        "/transfers",
        {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": amount,
            "currency": "EUR",
            "hold": {},
        },
    )
    assert response.status_code == CREATED[api.version], response.content
    body = response.json()
    return (body["data"] if api.version == "v1" else body)["transferId"]


def resolve(version: str, secret: str, transfer_id: str, body: dict):
    """In a thread: a client of its own; v1 resolves by POST (its alias of PATCH)."""
    api = Api(version, secret)
    send = api.patch if version == "v2" else api.post
    return send(f"/transfers/{transfer_id}", body).status_code


def resolutions(transfer_id: str) -> list[str]:
    return list(
        Event.objects.filter(type__in=RESOLUTION_EVENTS, object_id=transfer_id).values_list(
            "type", flat=True
        )
    )


def backdate(transfer_ids) -> None:
    past = timezone.now() - timedelta(seconds=1)
    transfers = Transfer.objects.filter(pk__in=transfer_ids)
    Hold.objects.filter(transfer__in=transfers).update(expires_at=past)
    transfers.update(expires_at=past)


@pytest.mark.parametrize(
    ("bodies", "version"),
    [
        ([{"status": "posted"}, {"status": "posted"}], "v2"),
        ([{"status": "posted"}, {"status": "voided"}], "v2"),
        ([{"status": "voided"}, {"status": "posted", "amount": 1_000}], "v1"),
    ],
)
def test_two_resolutions_at_once_one_wins(api, key, bodies, version):
    source = funded_account(api, START)["accountId"]
    destination = funded_account(api, 0)["accountId"]
    transfer_id = pending(api, source, destination, 2_500)

    codes = run_threads(2, lambda i: resolve(version, key[1], transfer_id, bodies[i]))

    assert sorted(codes) == [200, 409], codes
    winner = bodies[codes.index(200)]
    transfer = Transfer.objects.get(pk=transfer_id)
    assert transfer.status == winner["status"]
    assert resolutions(transfer_id) == [f"transfer.{winner['status']}"]
    moved = winner.get("amount", 2_500) if winner["status"] == "posted" else 0
    assert balances(api, source) == money(START - moved)
    assert balances(api, destination) == money(moved)
    assert ledger_breaches() == []


def test_a_void_racing_the_expiry_job_happens_once(api, key):
    source = funded_account(api, START)["accountId"]
    destination = funded_account(api, 0)["accountId"]
    transfer_ids = [pending(api, source, destination, 500) for _ in range(5)]
    backdate(transfer_ids)

    def work(index):
        if index == 0:
            return tasks.expire_holds(timestamp=0)["transfers"]
        # Past `expiresAt` a void is still allowed (until the job has closed it).
        return [
            resolve("v2", key[1], transfer_id, {"status": "voided"}) for transfer_id in transfer_ids
        ]

    expired, codes = run_threads(2, work)

    assert set(codes) <= {200, 409}
    statuses = Counter(
        Transfer.objects.filter(pk__in=transfer_ids).values_list("status", flat=True)
    )
    assert statuses["expired"] == expired == codes.count(409)
    assert statuses["voided"] == codes.count(200)
    for transfer_id in transfer_ids:
        assert len(resolutions(transfer_id)) == 1
    assert balances(api, source) == money(START)
    assert ledger_breaches() == []


def test_two_expiry_jobs_at_once_expire_each_transfer_once(api):
    source = funded_account(api, START)["accountId"]
    destination = funded_account(api, 0)["accountId"]
    transfer_ids = [pending(api, source, destination, 100) for _ in range(20)]
    backdate(transfer_ids)

    results = run_threads(2, lambda _: tasks.expire_holds(timestamp=0))

    assert sum(result["transfers"] for result in results) == 20
    assert set(Transfer.objects.filter(pk__in=transfer_ids).values_list("status", flat=True)) == {
        "expired"
    }
    events = Counter(
        Event.objects.filter(type="transfer.expired", object_id__in=transfer_ids).values_list(
            "object_id", flat=True
        )
    )
    assert events == dict.fromkeys(transfer_ids, 1)
    assert Account.objects.get(pk=source).pending == 0
    assert balances(api, source) == money(START)
    assert ledger_breaches() == []
