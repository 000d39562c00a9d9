"""The sandbox's clock for the rails (docs/payments.md, "The sandbox"): plays the next days of
ACH as they would pass, hour by hour, so a demo or a bank's rehearsal sees a payment filed,
settled and returned in a minute instead of three business days (as Stripe's and Lithic's
sandboxes let one do).

Each hour of each day, in order: the simulated bank answers what is due on that day
(`simulated_bank.simulated_bank_run`), and the simulated clearing its participants'
(`simulated_clearing.simulated_clearing_run`), then the payments job runs as it would at that
instant (`payments.services.rails.rails_run`: cut-offs whose time has come, delivery,
settlement, the inbox). Refused unless `SANDBOX_CLOCK` is on (development settings; production
refuses to start with it): played ahead of time, orders settle before their dates.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from core.exceptions import PermissionDenied
from institutions.calendar import local_date
from payments.services.rails import rails_run

from .simulated_bank import banked_institutions, simulated_bank_run
from .simulated_clearing import cleared_institutions, simulated_clearing_run


def rails_play(*, days: int, start: datetime | None = None) -> int:
    """Play `days` days of the rails from `start` (now), hour by hour; return how many hours
    were played."""
    if not settings.SANDBOX_CLOCK:
        raise PermissionDenied(
            "The sandbox clock is off (SANDBOX_CLOCK): it would settle payments ahead of their "
            "dates."
        )
    instant = (start or timezone.now()).replace(minute=59, second=0, microsecond=0)
    hours = 0
    for _ in range(days * 24):
        for institution in banked_institutions():
            simulated_bank_run(institution=institution, today=local_date(institution, instant))
        for institution in cleared_institutions():
            simulated_clearing_run(institution=institution, today=local_date(institution, instant))
        rails_run(now=instant)
        instant += timedelta(hours=1)
        hours += 1
    return hours
