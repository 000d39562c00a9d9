"""The worker logs one JSON object per line through the project's logging config, and a job
that handles card secrets (the renewal: same PAN, new CVV) logs none of them."""

import pytest
from procrastinate.contrib.django.models import ProcrastinateJob

from cards.models import Card
from jobs import tasks
from jobs.services import job_defer
from tests.cards.helpers import fresh_card, make_institution, new_card

from .helpers import expiring_in, job_status, successors_of
from .workers import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_renewal_run_by_a_worker_logs_json_and_no_card_secret(workers):
    fi = make_institution()
    due = expiring_in(new_card(fi, status=Card.Status.ACTIVE), 0)
    job_id = job_defer(tasks.renew_expiring_cards, timestamp=0)
    worker = workers.start(queues=["periodic"], env={"LOG_LEVEL": "DEBUG"})

    wait_until(lambda: job_status(job_id) == "succeeded")
    ours = ProcrastinateJob.objects.filter(task_name__startswith="jobs.")
    wait_until(lambda: not ours.filter(status__in=["todo", "doing"]).exists())
    assert worker.stop() == 0

    [renewal] = successors_of(due)
    records = worker.records()  # each line is one JSON object, or this fails
    assert {"time", "level", "logger", "message"} <= set(records[0])
    [done] = [r for r in records if r.get("action") == "job_success" and r["job"]["id"] == job_id]
    assert done["result"] == {"expired": 0, "renewed": 1, "skipped": {}}
    text = worker.log_text()
    for pan in (fresh_card(due).pan(), renewal.pan()):
        assert pan not in text
    # A CVV is 3 digits, found in any timestamp: no logged value or key is one, or names one.
    cvvs = {due.cvv(), renewal.cvv()}
    for key, value in leaves(records):
        assert str(value) not in cvvs, (key, value)
        assert not {"pan", "cvv", "pin"} & set(key.lower().split("_")), key


def leaves(value, key: str = ""):
    """(key, value) of every scalar in nested dicts and lists."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, key)
    else:
        yield key, value
