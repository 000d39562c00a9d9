"""Validity jobs (`cards_expire`, `cards_renew_expiring`), the `renew_expiring_cards` command and
its progress bar. The concurrency tests use real threads and committed transactions."""

import io
import threading
from collections import Counter
from datetime import UTC, datetime
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, transaction

from accounts.models import Account
from accounts.services import account_set_status
from cards.dates import add_months, today_of
from cards.models import Card
from cards.services import (
    card_replace,
    card_set_status,
    cards_expire,
    cards_renew_expiring,
    lock_card,
)
from core.management.progress import ProgressBar
from events.models import Event
from institutions.models import Institution
from tests.accounts.ledger.helpers import run_threads

from .helpers import card_events, force_status, fresh_card, make_institution, new_card

S = Card.Status


def expiring(card: Card, year: int, month: int) -> Card:
    card.set_expiry(year, month)
    card.save(update_fields=["expiry_year", "expiry_month", "expires_on"])
    return fresh_card(card)


def this_month(card: Card) -> Card:
    today = today_of(card.institution)
    return expiring(card, today.year, today.month)


def months_from_now(card: Card, months: int) -> Card:
    today = today_of(card.institution)
    return expiring(card, *add_months(today.year, today.month, months))


def frozen_at(moment: datetime):
    """`timezone.now()` (and so every institution's today) fixed at `moment`."""
    return mock.patch("django.utils.timezone.now", return_value=moment)


def card_in(fi, status=S.ACTIVE) -> Card:
    card = new_card(fi, status=S.ACTIVE if status == S.SUSPENDED else status)
    if status == S.SUSPENDED:
        card = card_set_status(card=card, status=S.SUSPENDED).value
    return fresh_card(card)


def close_account_of(card: Card) -> None:
    account = Account.objects.get(pk=card.account_id)
    account_set_status(account=account, status=Account.Status.CLOSED)


def successors_of(card: Card) -> list[Card]:
    return list(Card.objects.filter(predecessor_id=card.pk))


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


class TTY(io.StringIO):
    def isatty(self):
        return True


# --- cards_expire ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_only_active_cards_past_their_validity_expire():
    fi = make_institution()
    past = months_from_now(card_in(fi), -1)
    current = this_month(card_in(fi))  # valid through the end of this month
    inactive = months_from_now(card_in(fi, S.INACTIVE), -1)
    suspended = months_from_now(card_in(fi, S.SUSPENDED), -1)
    before = {card.pk: fresh_card(card).updated_at for card in (current, inactive, suspended)}

    assert cards_expire() == 1

    past = fresh_card(past)
    assert (past.status, past.status_reason) == (S.EXPIRED, "validity ended")
    assert card_events(past, "card.status_changed") == [
        ("card.status_changed", {"from": "active", "to": "expired", "reason": "validity ended"})
    ]
    assert fresh_card(current).status == S.ACTIVE
    assert fresh_card(inactive).status == S.INACTIVE
    assert fresh_card(suspended).status == S.SUSPENDED
    for card in (current, inactive, suspended):
        assert fresh_card(card).updated_at == before[card.pk]
        assert card_events(card, "card.status_changed") == (
            [("card.status_changed", {"from": "active", "to": "suspended", "reason": ""})]
            if card is suspended
            else []
        )
    assert cards_expire() == 0


@pytest.mark.django_db
def test_expiry_follows_each_institutions_calendar():
    kiritimati = make_institution(time_zone="Pacific/Kiritimati")  # UTC+14
    utc = make_institution(time_zone="UTC")
    pago_pago = make_institution(time_zone="Pacific/Pago_Pago")  # UTC-11
    cards = {fi.time_zone: expiring(card_in(fi), 2030, 6) for fi in (kiritimati, utc, pago_pago)}

    # 12:00 UTC on June 30th: already July 1st in Kiritimati only.
    with frozen_at(datetime(2030, 6, 30, 12, tzinfo=UTC)):
        assert cards_expire() == 1
    assert {zone: fresh_card(card).status for zone, card in cards.items()} == {
        "Pacific/Kiritimati": S.EXPIRED,
        "UTC": S.ACTIVE,
        "Pacific/Pago_Pago": S.ACTIVE,
    }

    # 05:00 UTC on July 1st: still June 30th in Pago Pago.
    with frozen_at(datetime(2030, 7, 1, 5, tzinfo=UTC)):
        assert cards_expire() == 1
    assert fresh_card(cards["UTC"]).status == S.EXPIRED
    assert fresh_card(cards["Pacific/Pago_Pago"]).status == S.ACTIVE


@pytest.mark.django_db
def test_expiry_walks_every_batch_past_cards_not_yet_ended_in_their_zone():
    # In batches of 2: the first batch holds cards still valid in Pago Pago (they stay active
    # and are candidates again): the job must move on to the next batch, not loop or stop.
    pago_pago = make_institution(time_zone="Pacific/Pago_Pago")
    utc = make_institution(time_zone="UTC")
    waiting = [expiring(card_in(pago_pago), 2030, 6) for _ in range(3)]
    ended = [expiring(card_in(utc), 2030, 6) for _ in range(3)]

    with frozen_at(datetime(2030, 7, 1, 5, tzinfo=UTC)):
        assert cards_expire(batch_size=2) == 3

    assert [fresh_card(card).status for card in waiting] == [S.ACTIVE] * 3
    assert [fresh_card(card).status for card in ended] == [S.EXPIRED] * 3


# --- cards_renew_expiring ----------------------------------------------------------------------


@pytest.mark.django_db
def test_renewal_takes_active_and_suspended_cards_ending_within_the_window_without_successor():
    fi = make_institution()
    active = this_month(card_in(fi))
    suspended = this_month(card_in(fi, S.SUSPENDED))
    inactive = this_month(card_in(fi, S.INACTIVE))
    later = months_from_now(card_in(fi), 2)  # ends more than 30 days from now
    expired = force_status(months_from_now(card_in(fi), -1), S.EXPIRED)
    # An active card that already has a successor (set-up only: a replaced card made active).
    replaced = card_in(fi)
    card_replace(card=replaced, reason="damaged")
    replaced = this_month(force_status(replaced, S.ACTIVE))
    untouched = [inactive, later, expired, replaced]
    cards_before = Card.objects.count()

    report = cards_renew_expiring(within_days=30)

    assert (report.renewed, report.skipped) == (2, Counter())
    assert Card.objects.count() == cards_before + 2
    for old in (active, suspended):
        [new] = successors_of(old)
        closed = fresh_card(old)
        assert (closed.status, closed.status_reason) == (S.CLOSED, "renewed")
        assert new.succession == Card.Succession.RENEWAL
        assert new.pan() == closed.pan()
        assert new.pan_fingerprint == closed.pan_fingerprint
        assert new.expires_on > closed.expires_on
        assert [type_ for type_, _ in card_events(new)] == ["card.renewed"]
    assert successors_of(active)[0].status == S.ACTIVE
    assert successors_of(suspended)[0].status == S.SUSPENDED
    assert [fresh_card(card).status for card in untouched] == [
        S.INACTIVE,
        S.ACTIVE,
        S.EXPIRED,
        S.ACTIVE,
    ]
    assert [len(successors_of(card)) for card in untouched] == [0, 0, 0, 1]


@pytest.mark.django_db
def test_the_window_is_counted_in_days_in_each_institutions_calendar():
    utc = make_institution(time_zone="UTC")
    kiritimati = make_institution(time_zone="Pacific/Kiritimati")
    in_utc = expiring(card_in(utc), 2030, 6)  # valid through June 30th
    in_kiritimati = expiring(card_in(kiritimati), 2030, 6)

    # 12:00 UTC on June 20th: June 21st in Kiritimati. June 30th is 10 days away in UTC.
    with frozen_at(datetime(2030, 6, 20, 12, tzinfo=UTC)):
        assert cards_renew_expiring(within_days=8).renewed == 0
        assert cards_renew_expiring(within_days=9).renewed == 1
        assert successors_of(in_kiritimati) and not successors_of(in_utc)
        assert cards_renew_expiring(within_days=10).renewed == 1
    assert successors_of(in_utc)


@pytest.mark.django_db
def test_a_card_whose_renewal_is_refused_is_skipped_and_the_others_are_renewed():
    fi = make_institution()
    on_closed = this_month(card_in(fi))
    close_account_of(on_closed)
    fine = this_month(card_in(fi))
    calls = []

    report = cards_renew_expiring(within_days=30, on_progress=lambda *args: calls.append(args))

    assert (report.renewed, report.skipped) == (1, Counter({"account_not_active": 1}))
    assert report.skipped_total == 1
    assert calls == [(1, 2), (2, 2)]
    assert len(successors_of(fine)) == 1
    assert fresh_card(on_closed).status == S.ACTIVE
    assert successors_of(on_closed) == []
    assert card_events(on_closed, "card.status_changed") == []


@pytest.mark.django_db
def test_renewing_twice_renews_once():
    fi = make_institution()
    cards = [this_month(card_in(fi)) for _ in range(3)]

    first = cards_renew_expiring(within_days=30)
    second = cards_renew_expiring(within_days=30)

    assert (first.renewed, first.skipped_total) == (3, 0)
    assert (second.renewed, second.skipped_total) == (0, 0)
    assert [len(successors_of(card)) for card in cards] == [1, 1, 1]
    assert Event.objects.filter(type="card.renewed").count() == 3


@pytest.mark.django_db
def test_a_negative_window_is_refused():
    with pytest.raises(ValueError, match="within_days"):
        cards_renew_expiring(within_days=-1)


# --- two processes at once ---------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_renewal_runs_renew_each_card_exactly_once():
    fi = make_institution()
    cards = [this_month(card_in(fi, S.SUSPENDED if i % 3 == 0 else S.ACTIVE)) for i in range(12)]

    reports = run_threads(2, lambda index: cards_renew_expiring(within_days=30))

    assert sum(report.renewed for report in reports) == 12
    for report in reports:
        assert report.renewed + report.skipped_total == 12
        assert set(report.skipped) <= {"locked", "no_longer_due"}
    assert [len(successors_of(card)) for card in cards] == [1] * 12
    assert [fresh_card(card).status for card in cards] == [S.CLOSED] * 12
    assert Event.objects.filter(type="card.renewed").count() == 12
    assert Card.objects.filter(status__in=Card.LIVE).count() == 12  # one live card per PAN


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_expiry_runs_expire_each_card_exactly_once():
    fi = make_institution()
    cards = [months_from_now(card_in(fi), -1) for _ in range(12)]

    counts = run_threads(2, lambda index: cards_expire(batch_size=3))

    assert sum(counts) == 12
    assert [fresh_card(card).status for card in cards] == [S.EXPIRED] * 12
    changes = Event.objects.filter(type="card.status_changed", data__to="expired")
    assert sorted(changes.values_list("object_id", flat=True)) == sorted(c.pk for c in cards)


# --- the command -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_renew_expiring_cards_expires_then_renews_and_sums_up():
    fi = make_institution()
    ended = months_from_now(card_in(fi), -1)
    due = [this_month(card_in(fi)) for _ in range(2)]
    on_closed = this_month(card_in(fi))
    close_account_of(on_closed)

    out, err = run("renew_expiring_cards", "--within-days", "30")

    assert out == ("Expired 1 card(s). Renewed 2 card(s); skipped 1: 1 account_not_active.\n")
    assert err == f"[{'#' * 30}] 3/3\n"  # not a terminal: the final line only
    assert fresh_card(ended).status == S.EXPIRED
    assert successors_of(ended) == []
    assert [len(successors_of(card)) for card in due] == [1, 1]

    out, err = run("renew_expiring_cards", "--within-days", "30")
    assert out == "Expired 0 card(s). Renewed 0 card(s); skipped 1: 1 account_not_active.\n"


@pytest.mark.django_db
def test_renew_expiring_cards_with_nothing_to_do():
    out, err = run("renew_expiring_cards", "--within-days", "0")

    assert out == "Expired 0 card(s). Renewed 0 card(s); skipped 0.\n"
    assert err == f"[{'#' * 30}] 0/0\n"


@pytest.mark.django_db
def test_renew_expiring_cards_draws_its_bar_on_a_terminal_stderr():
    fi = make_institution()
    for _ in range(3):
        this_month(card_in(fi))
    out, err = io.StringIO(), TTY()

    call_command("renew_expiring_cards", "--within-days", "30", stdout=out, stderr=err)

    assert out.getvalue() == "Expired 0 card(s). Renewed 3 card(s); skipped 0.\n"
    text = err.getvalue()
    assert text.startswith("\r[")
    assert text.endswith(f"\r[{'#' * 30}] 3/3\n")
    assert "\x1b" not in text  # no colour codes
    assert "[" not in out.getvalue()


@pytest.mark.parametrize("args", [[], ["--within-days", "-1"], ["--within-days", "soon"]])
def test_renew_expiring_cards_needs_a_window_of_zero_days_or_more(args):
    with pytest.raises(CommandError) as excinfo:
        run("renew_expiring_cards", *args)
    assert excinfo.value.returncode == 1
    assert "within-days" in str(excinfo.value)


# --- the progress bar --------------------------------------------------------------------------


def test_progress_bar_on_a_terminal_redraws_one_line():
    stream = TTY()
    bar = ProgressBar(stream, 10, width=10, interval=0)

    for done in (1, 4, 10):
        bar.update(done)
    bar.finish()
    bar.finish()

    assert stream.getvalue() == (
        "\r[#.........] 1/10\r[####......] 4/10\r[##########] 10/10\r[##########] 10/10\n"
    )


def test_progress_bar_elsewhere_writes_only_the_final_line():
    stream = io.StringIO()

    with ProgressBar(stream, width=10) as bar:
        bar.update(1, 3)
        bar.update(2, 3)

    assert stream.getvalue() == "[######....] 2/3\n"


def test_progress_bar_redraws_at_most_every_interval():
    stream = TTY()
    bar = ProgressBar(stream, 1000, width=4, interval=3600)

    for done in range(1, 1001):
        bar.update(done)

    # The first update, then nothing until the last one.
    assert stream.getvalue() == "\r[....] 1/1000\r[####] 1000/1000"


# --- locks -------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_locking_a_card_leaves_its_institution_row_free():
    # A FOR UPDATE on the institution (the joined row) would block every write referencing it
    # (their deferred foreign-key checks take FOR KEY SHARE at commit) and deadlock with the
    # account locks of a card payment.
    card = card_in(make_institution())
    locked, release = threading.Event(), threading.Event()

    def hold_the_card(index):
        with transaction.atomic():
            lock_card(card.pk)
            locked.set()
            release.wait(timeout=30)

    def can_take(model, pk):
        try:
            with transaction.atomic():
                rows = model.objects.select_for_update(nowait=True, no_key=True).filter(pk=pk)
                list(rows.values_list("pk"))
            return True
        except OperationalError as error:
            assert type(error.__cause__).__name__ == "LockNotAvailable"
            return False

    def probe(index):
        locked.wait(timeout=30)
        try:
            return {
                "institution": can_take(Institution, card.institution_id),
                "card": can_take(Card, card.pk),
            }
        finally:
            release.set()

    results = run_threads(2, lambda index: (hold_the_card, probe)[index](index))

    assert results[1] == {"institution": True, "card": False}
