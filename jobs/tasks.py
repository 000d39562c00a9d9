"""The periodic jobs (docs/jobs.md). Every worker (`manage.py procrastinate worker`, on any
number of machines) defers them on their schedule and runs them.

Each task is a thin call of a service that is safe when two processes run it at once (batches
taken with SKIP LOCKED, one transaction per row or batch), entered as every write is, through
`core.operations`: as the system (events name it), a one-transaction service as one operation,
a batch service with `run_batches`. On top of that, each task is
stacked as

    @app.periodic(cron=..., periodic_id=...)   one job per tick, however many workers defer it
    @app.task(queue="periodic", queueing_lock=NAME, lock=NAME)

- `queueing_lock`: at most one job of the task waits in `todo`. When the workers fall behind
  (or none runs for a while) the ticks do not pile up: the next run does all the work due.
- `lock`: at most one job of the task runs at a time. A second run started while the first
  one is still going would only race it for the same rows. If the worker running it dies,
  the lock stays taken until `retry_stalled_jobs` gives the job back (a minute or so after
  `PROCRASTINATE_STALLED_SECONDS`).
- `retry_stalled_jobs` has a queueing lock but no `lock`: a recovery job stranded on a dead
  worker must not keep the next one from running (the next one retries it).

The worker logs every job's arguments and return value (`call_string`, "Result: ..."):
tasks here take only the tick's `timestamp` and return counts and ids, never a secret.
"""

from dataclasses import asdict

from django.conf import settings
from procrastinate import builtin_tasks
from procrastinate.contrib.django import app

from accounts.services import holds_expire, monthly_fees_charge
from api.idempotency import idempotency_keys_purge
from api.ratelimit import rate_counters_purge
from api.replicas import replica_marks_purge
from authorizations.services import (
    authorizations_expire,
    authorizations_resolve_stranded,
    increments_resolve_stranded,
)
from cards.services import cards_expire, cards_renew_expiring
from core.actors import SYSTEM
from core.operations import run, run_batches
from disputes.services.watch import disputes_watch_deadlines
from interest.accrual import interest_accrue
from interest.posting import interest_post
from payments.services.rails import rails_run
from reconciliation.services.ageing import breaks_watch_ageing
from transfers.services import transfers_expire

from .services import stalled_jobs_retry

QUEUE = "periodic"
# Finished jobs are kept this long, then deleted (failed and aborted ones are kept).
KEEP_FINISHED_JOBS_HOURS = 7 * 24


@app.periodic(cron="* * * * *", periodic_id="expire_holds")
@app.task(
    name="jobs.expire_holds",
    queue=QUEUE,
    queueing_lock="jobs.expire_holds",
    lock="jobs.expire_holds",
)
def expire_holds(timestamp: int) -> dict[str, int]:
    """Every minute: holds past `expiresAt` expire (`hold.expired`), card authorizations'
    holds too (`authorization.expired`, limit usage given back), and pending two-phase
    transfers' (`transfer.expired`, a card source's limit usage given back)."""
    return {
        "holds": run_batches(holds_expire, actor=SYSTEM),
        "authorizations": run_batches(authorizations_expire, actor=SYSTEM),
        "transfers": run_batches(transfers_expire, actor=SYSTEM),
    }


# Six fields: croniter reads the sixth as seconds.
@app.periodic(cron="* * * * * */5", periodic_id="resolve_stranded_authorizations")
@app.task(
    name="jobs.resolve_stranded_authorizations",
    queue=QUEUE,
    queueing_lock="jobs.resolve_stranded_authorizations",
    lock="jobs.resolve_stranded_authorizations",
)
def resolve_stranded_authorizations(timestamp: int) -> dict[str, int]:
    """Every 5 seconds: card authorizations and their increments left awaiting their program
    (the request's process stopped between the hold and the decision) are decided by their
    endpoint's `on_failure` (docs/decisioning.md, "After a crash")."""
    return {
        "authorizations": run_batches(authorizations_resolve_stranded, actor=SYSTEM),
        "increments": run_batches(increments_resolve_stranded, actor=SYSTEM),
    }


@app.periodic(cron="23 * * * *", periodic_id="watch_dispute_deadlines")
@app.task(
    name="jobs.watch_dispute_deadlines",
    queue=QUEUE,
    queueing_lock="jobs.watch_dispute_deadlines",
    lock="jobs.watch_dispute_deadlines",
)
def watch_dispute_deadlines(timestamp: int) -> dict[str, int]:
    """Hourly: each dispute deadline that is approaching or missed in its institution's
    calendar gets its event once; a draft past its network filing deadline closes `expired`
    (docs/disputes.md, "Deadlines")."""
    return run_batches(disputes_watch_deadlines, actor=SYSTEM)


@app.periodic(cron="41 * * * *", periodic_id="watch_reconciliation_breaks")
@app.task(
    name="jobs.watch_reconciliation_breaks",
    queue=QUEUE,
    queueing_lock="jobs.watch_reconciliation_breaks",
    lock="jobs.watch_reconciliation_breaks",
)
def watch_reconciliation_breaks(timestamp: int) -> dict[str, int]:
    """Hourly: each reconciliation break open more than its business days raises one monitoring
    alert (docs/reconciliation.md, "Ageing")."""
    return run_batches(breaks_watch_ageing, actor=SYSTEM)


@app.periodic(cron="* * * * *", periodic_id="run_rails")
@app.task(
    name="jobs.run_rails",
    queue=QUEUE,
    queueing_lock="jobs.run_rails",
    lock="jobs.run_rails",
)
def run_rails(timestamp: int) -> dict:
    """Every minute: the ACH cut-offs that have passed write their files (once each), the
    files reach the outbox, due orders settle, prenotes verify, the bank's inbox is read
    (docs/payments.md, "Jobs"). Returns counts and file ids."""
    return asdict(run_batches(rails_run, actor=SYSTEM))


@app.periodic(cron="17 * * * *", periodic_id="accrue_interest")
@app.task(
    name="jobs.accrue_interest",
    queue=QUEUE,
    queueing_lock="jobs.accrue_interest",
    lock="jobs.accrue_interest",
)
def accrue_interest(timestamp: int) -> dict[str, int]:
    """Hourly: each institution's days ended (its time zone) and not yet accrued get their
    accounts' interest stored and booked, once each however many runs; missed days are caught
    up; then money booked since with a value date in those days is caught up by adjustments
    (docs/interest.md, "The accrual job", "Back-valued money")."""
    return asdict(run_batches(interest_accrue, actor=SYSTEM))


@app.periodic(cron="47 * * * *", periodic_id="post_interest")
@app.task(
    name="jobs.post_interest",
    queue=QUEUE,
    queueing_lock="jobs.post_interest",
    lock="jobs.post_interest",
)
def post_interest(timestamp: int) -> dict[str, int]:
    """Hourly, half an hour after the accrual: each account's posting periods that have ended
    and whose last day is accrued are posted, once each however many runs; missed periods are
    caught up (docs/interest.md, "Posting")."""
    return asdict(run_batches(interest_post, actor=SYSTEM))


@app.periodic(cron="7 * * * *", periodic_id="purge_idempotency_keys")
@app.task(
    name="jobs.purge_idempotency_keys",
    queue=QUEUE,
    queueing_lock="jobs.purge_idempotency_keys",
    lock="jobs.purge_idempotency_keys",
)
def purge_idempotency_keys(timestamp: int) -> dict[str, int]:
    """Hourly: idempotency records older than the 24-hour replay window are deleted, the rate
    limiter's counters of ended windows (api.ratelimit) and the expired read-your-writes marks
    (api.replicas)."""
    return {
        "purged": run(idempotency_keys_purge, actor=SYSTEM).value,
        "rateCounters": run(rate_counters_purge, actor=SYSTEM).value,
        "replicaMarks": run(replica_marks_purge, actor=SYSTEM).value,
    }


@app.periodic(cron="30 0 * * *", periodic_id="renew_expiring_cards")
@app.task(
    name="jobs.renew_expiring_cards",
    queue=QUEUE,
    queueing_lock="jobs.renew_expiring_cards",
    lock="jobs.renew_expiring_cards",
)
def renew_expiring_cards(timestamp: int) -> dict:
    """Daily at 00:30 UTC: active cards past their validity expire, then the cards whose
    validity ends within `CARD_RENEWAL_WITHIN_DAYS` are renewed (same PAN, new expiry)."""
    expired = run_batches(cards_expire, actor=SYSTEM)
    report = run_batches(
        cards_renew_expiring, actor=SYSTEM, within_days=settings.CARD_RENEWAL_WITHIN_DAYS
    )
    return {"expired": expired, "renewed": report.renewed, "skipped": dict(report.skipped)}


@app.periodic(cron="45 1 * * *", periodic_id="charge_monthly_fees")
@app.task(
    name="jobs.charge_monthly_fees",
    queue=QUEUE,
    queueing_lock="jobs.charge_monthly_fees",
    lock="jobs.charge_monthly_fees",
)
def charge_monthly_fees(timestamp: int) -> dict[str, int]:
    """Daily at 01:45 UTC: each active account on a product with a monthly fee is charged the
    previous month's (its institution's calendar), once per account and month however many
    runs (docs/fees.md); an account its fee missed (locked by another run, a worker down on the
    1st) is charged by the next day's run."""
    return run_batches(monthly_fees_charge, actor=SYSTEM)


@app.periodic(cron="* * * * *", periodic_id="retry_stalled_jobs")
@app.task(
    name="jobs.retry_stalled_jobs",
    queue=QUEUE,
    queueing_lock="jobs.retry_stalled_jobs",
    pass_context=True,
)
async def retry_stalled_jobs(context, timestamp: int) -> dict[str, list[int]]:
    """Every minute: the jobs of workers silent for `PROCRASTINATE_STALLED_SECONDS` go back to
    `todo` (jobs/services.py)."""
    return await stalled_jobs_retry(job_manager=context.app.job_manager)


@app.periodic(cron="0 4 * * *", periodic_id="remove_old_jobs")
@app.task(
    name="jobs.remove_old_jobs",
    queue=QUEUE,
    queueing_lock="jobs.remove_old_jobs",
    lock="jobs.remove_old_jobs",
    pass_context=True,
)
async def remove_old_jobs(context, timestamp: int) -> None:
    """Daily at 04:00 UTC: procrastinate's own cleanup deletes the jobs that succeeded (or
    were cancelled before running) more than `KEEP_FINISHED_JOBS_HOURS` ago; failed and
    aborted jobs stay for an operator to look at."""
    await builtin_tasks.remove_old_jobs(
        context,
        max_hours=KEEP_FINISHED_JOBS_HOURS,
        remove_failed=False,
        remove_cancelled=True,
        remove_aborted=False,
    )
