"""The rails' clock: what the payments job does every minute (docs/payments.md, "Jobs"), for
each institution with an ACH profile, each step safe to run twice or in two processes at once:

1. the cut-offs of its day that have passed, each once (`cutoff.cutoff_run`: one file per
   window, a unique index), on its ACH days only (`payments.calendar`: its business days that
   are the Fed's too; ACH moves nothing on the others: the orders wait for the next ACH day's
   windows); and for each institution with a SEPA profile, its SEPA credit transfers' cut-off
   (`credit_transfer_cutoff`: a pain.001 for an `initiation` profile, a pacs.008 for an
   `interbank` one) on its SEPA days (TARGET2's business days it is open), and its direct
   debits' cut-off; and its recalls asked since, each in a camt.056 (`recalls.recalls_write`:
   to the partner bank, or an interbank profile's through the clearing);
2. every written file not yet in the outbox delivered (`connector.deliver_pending`);
3. the sent orders whose effective date has come settled (`settlement.orders_settle`), the
   prenotes past their window verified, the collected debits' return holds expired;
4. its inbox read (`connector.collect`: each file applied once, by its bytes; the `sepa`
   inbox's pain.002 and camt.054 too, a SEPA order settling by its booking, and an interbank
   profile's pacs.002 and pacs.004 from the clearing), after the
   settlement: a return of an entry settled today finds it settled (returned, not rejected);
5. the inbound entries whose settlement date has come applied, or marked to go back in the
   next file (`inbound.inbound_entries_settle`), the ones just read included; an interbank
   profile's inbound direct debits debited, or returned in a pacs.004 written then and
   delivered by the next run's step 2 (`inbound_debits.collections_settle`).

Before 2, the SEPA Instant orders a crash left are mended (`instant.instant_sweep`): approved
for longer than the timeout, sent; sent for more than twice the timeout, rejected `TECH`.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from institutions.calendar import local_date

from .. import connector
from ..calendar import is_ach_day, is_sepa_day, window_instant
from ..models import AchProfile, Rail, SepaProfile
from .cutoff import cutoff_run
from .inbound import inbound_entries_settle
from .inbound_debits import collections_settle
from .inbound_recalls import inbound_recalls_expire
from .instant import instant_sweep
from .recalls import recalls_write
from .settlement import orders_settle, prenotes_verify, returns_holds_expire


@dataclass
class RailsRun:
    files_written: list[str] = field(default_factory=list)
    files_delivered: int = 0
    files_read: int = 0
    settled: int = 0
    verified: int = 0
    holds_released: int = 0
    inbound_settled: int = 0
    instant_sent: int = 0
    instant_timed_out: int = 0
    recalls_expired: int = 0


def windows(profile: AchProfile) -> list[tuple[str, str]]:
    """(rail, "HH:MM") of each of the profile's cut-offs."""
    return [(Rail.ACH_SAME_DAY, each) for each in profile.same_day_cutoffs] + [
        (Rail.ACH, profile.next_day_cutoff)
    ]


def rails_run(*, now: datetime | None = None) -> RailsRun:
    now = now or timezone.now()
    result = RailsRun()
    for profile in AchProfile.objects.select_related("institution"):
        institution = profile.institution
        day = local_date(institution, now)
        if is_ach_day(institution, day):
            for rail, window in windows(profile):
                if window_instant(institution, day, window) <= now:
                    written = cutoff_run(profile=profile, rail=rail, window_date=day, window=window)
                    if written is not None and written.delivered_at is None:
                        result.files_written.append(written.pk)
    for profile in SepaProfile.objects.select_related("institution"):
        institution = profile.institution
        day = local_date(institution, now)
        # Credit transfers' cut-off (a pain.001, or an interbank profile's pacs.008), and the
        # direct debits' when the institution collects (a creditor identifier: a pain.008, or
        # an interbank profile's pacs.003): one file per window each.
        cutoffs = [(Rail.SEPA_CT, profile.credit_transfer_cutoff)]
        if profile.creditor_identifier:
            cutoffs.append((Rail.SEPA_DD, profile.direct_debit_cutoff))
        for rail, window in cutoffs:
            if is_sepa_day(institution, day) and window_instant(institution, day, window) <= now:
                written = cutoff_run(profile=profile, rail=rail, window_date=day, window=window)
                if written is not None and written.delivered_at is None:
                    result.files_written.append(written.pk)
        # Recalls asked since the last run, each in a camt.056 (any day: a recall has no
        # cut-off), delivered with the files below.
        result.files_written += [each.pk for each in recalls_write(profile=profile, now=now)]
    # Recalls TX was asked to answer and has not, past their last day: refused NOAS, the
    # answers delivered with the files below.
    result.recalls_expired = inbound_recalls_expire(now=now)
    # SEPA Instant orders a crash left behind: sent, or rejected TECH past their timeout.
    result.instant_sent, result.instant_timed_out = instant_sweep(now=now)
    result.files_delivered = connector.deliver_pending()
    result.settled = orders_settle(now=now)
    result.verified = prenotes_verify(now=now)
    result.holds_released = returns_holds_expire(now=now)
    for profile in AchProfile.objects.select_related("institution"):
        result.files_read += len(connector.collect(profile.institution, now=now))
    for profile in SepaProfile.objects.select_related("institution"):
        result.files_read += len(connector.collect(profile.institution, "sepa", now=now))
    result.inbound_settled = inbound_entries_settle(now=now) + collections_settle(now=now)
    return result
