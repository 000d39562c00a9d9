"""`screen`: every kind hits exactly at its boundary and not one below, only the institution's
enabled rules apply, risk levels and currencies filter, velocity counts the card's chain over
its window, decline and alert rules are told apart, and it costs at most two queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.names import api_data
from cards.models import Card
from cards.services import card_renew
from monitoring.services import Hit, Screening, monitoring_rule_update, screen
from tests.cards.helpers import make_institution
from tests.monitoring.helpers import (
    MERCHANT,
    NOW,
    active_card,
    make_rule,
    pay,
    seconds,
    threshold,
)

pytestmark = pytest.mark.django_db


def hits(card, amount=100, currency="EUR", merchant=MERCHANT, now=NOW) -> list[tuple]:
    """(rule id, details) of each hit, the details as the API shows them (`api.names`)."""
    screening = screen(card=card, amount=amount, currency=currency, merchant=merchant, now=now)
    return [(rule.pk, api_data(details, stored=False)) for rule, details in screening.hits]


@pytest.fixture
def card():
    return active_card()


@pytest.fixture
def fi(card):
    return card.institution


# --- amount_threshold
def test_amount_threshold_hits_above_the_amount_not_at_it(fi, card):
    rule = threshold(fi, amount=10_000)
    assert hits(card, 10_000) == []
    assert hits(card, 10_001) == [
        (
            rule.pk,
            {"amount": 10_001, "thresholdAmount": 10_000, "currency": "EUR", "riskLevel": "low"},
        )
    ]


def test_amount_threshold_only_in_its_currency(fi, card):
    threshold(fi, amount=10_000, currency="EUR")
    assert hits(card, 10**9, "USD") == []
    usd = threshold(fi, amount=5, currency="USD")
    assert [rule_id for rule_id, _ in hits(card, 6, "USD")] == [usd.pk]


def test_amount_threshold_risk_level_filter(fi):
    low = active_card(fi, risk_level=Card.RiskLevel.LOW)
    high = active_card(fi, risk_level=Card.RiskLevel.HIGH)
    for_high = threshold(fi, amount=1_000, risk_level="high")
    for_any = threshold(fi, amount=50_000)
    assert hits(low, 1_001) == []
    assert hits(high, 1_001) == [
        (
            for_high.pk,
            {"amount": 1_001, "thresholdAmount": 1_000, "currency": "EUR", "riskLevel": "high"},
        )
    ]
    assert [rule_id for rule_id, _ in hits(low, 50_001)] == [for_any.pk]
    assert [rule_id for rule_id, _ in hits(high, 50_001)] == [for_high.pk, for_any.pk]


# --- velocity_count
def test_velocity_count_hits_the_payment_after_max_count(fi, card):
    rule = make_rule(fi, "velocity_count", window_seconds=3600, max_count=3)
    assert hits(card) == []  # the first payment
    pay(card, at=NOW - seconds(10))
    pay(card, at=NOW - seconds(20))
    assert hits(card) == []  # the third within the window: at max_count, no hit
    pay(card, at=NOW - seconds(30))
    assert hits(card) == [(rule.pk, {"count": 4, "maxCount": 3, "windowSeconds": 3600})]


def test_velocity_count_window_is_strictly_newer_than_now_minus_window(fi, card):
    rule = make_rule(fi, "velocity_count", window_seconds=3600, max_count=1)
    pay(card, at=NOW - seconds(3600))  # exactly window ago: outside
    assert hits(card) == []
    pay(card, at=NOW - seconds(3599))  # one second inside
    assert hits(card) == [(rule.pk, {"count": 2, "maxCount": 1, "windowSeconds": 3600})]


def test_velocity_count_counts_every_currency_and_only_this_cards_chain(fi, card):
    rule = make_rule(fi, "velocity_count", window_seconds=600, max_count=2)
    other = active_card(fi)
    pay(other, at=NOW - seconds(1))
    pay(other, at=NOW - seconds(2))
    pay(card, 100, "USD", at=NOW - seconds(5))
    assert hits(card) == []
    pay(card, 100, "GBP", at=NOW - seconds(6))
    assert hits(card, currency="CHF") == [
        (rule.pk, {"count": 3, "maxCount": 2, "windowSeconds": 600})
    ]


def test_velocity_counts_the_payments_of_the_renewed_card(fi, card):
    rule = make_rule(fi, "velocity_count", window_seconds=600, max_count=1)
    pay(card, at=NOW - seconds(5))
    renewal = card_renew(card=Card.objects.get(pk=card.pk))
    renewal = Card.objects.get(pk=renewal.pk)
    assert renewal.lineage_root_id == card.pk
    assert hits(renewal) == [(rule.pk, {"count": 2, "maxCount": 1, "windowSeconds": 600})]


# --- velocity_amount
def test_velocity_amount_hits_above_max_amount_not_at_it(fi, card):
    rule = make_rule(fi, "velocity_amount", window_seconds=86_400, max_amount=1_000, currency="EUR")
    pay(card, 600, at=NOW - seconds(100))
    pay(card, 10_000, "USD", at=NOW - seconds(100))  # another currency: not summed
    pay(card, 10_000, at=NOW - seconds(86_400))  # outside the window
    assert hits(card, 400) == []
    assert hits(card, 401) == [
        (
            rule.pk,
            {"total": 1_001, "maxAmount": 1_000, "currency": "EUR", "windowSeconds": 86_400},
        )
    ]


def test_velocity_amount_ignores_payments_in_another_currency(fi, card):
    make_rule(fi, "velocity_amount", window_seconds=60, max_amount=1_000, currency="EUR")
    pay(card, 5_000, at=NOW - seconds(1))
    assert hits(card, 10_000, "USD") == []


def test_a_single_payment_above_max_amount_hits(fi, card):
    rule = make_rule(fi, "velocity_amount", window_seconds=60, max_amount=1_000, currency="EUR")
    assert [rule_id for rule_id, _ in hits(card, 1_001)] == [rule.pk]


# --- blocked_mcc, blocked_country
def test_blocked_mcc_hits_a_listed_mcc_only(fi, card):
    rule = make_rule(fi, "blocked_mcc", mccs=["7995", "5993"])
    assert hits(card, merchant={**MERCHANT, "mcc": "5411"}) == []
    assert hits(card, merchant={**MERCHANT, "mcc": "7995"}) == [(rule.pk, {"mcc": "7995"})]


def test_blocked_country_hits_a_listed_country_only(fi, card):
    rule = make_rule(fi, "blocked_country", countries=["408"])
    assert hits(card, merchant={**MERCHANT, "country_code": "276"}) == []
    assert hits(card, merchant={**MERCHANT, "country_code": "408"}) == [
        (rule.pk, {"countryCode": "408"})
    ]


def test_a_transfer_never_hits_mcc_or_country_rules(fi, card):
    make_rule(fi, "blocked_mcc", mccs=["5411"])
    make_rule(fi, "blocked_country", countries=["276"])
    amount_rule = threshold(fi, amount=1)
    assert [rule_id for rule_id, _ in hits(card, 2, merchant=None)] == [amount_rule.pk]


# --- which rules apply
def test_disabled_rules_never_hit(fi, card):
    rules = [
        threshold(fi, amount=1, action="decline"),
        make_rule(fi, "velocity_count", window_seconds=60, max_count=1),
        make_rule(fi, "velocity_amount", window_seconds=60, max_amount=1, currency="EUR"),
        make_rule(fi, "blocked_mcc", mccs=["5411"]),
        make_rule(fi, "blocked_country", countries=["276"]),
    ]
    pay(card, at=NOW - seconds(1))
    assert len(hits(card, 100)) == 5
    for rule in rules:
        monitoring_rule_update(rule=rule, changes={"enabled": False})
    assert hits(card, 100) == []
    screening = screen(card=card, amount=100, currency="EUR", merchant=MERCHANT, now=NOW)
    assert screening == Screening(hits=[]) and not screening.declined


def test_another_institutions_rules_never_apply(card):
    other = make_institution()
    threshold(other, amount=1, action="decline")
    make_rule(other, "blocked_mcc", mccs=["5411"])
    make_rule(other, "velocity_count", window_seconds=60, max_count=1)
    pay(card, at=NOW - seconds(1))
    assert hits(card, 10**6) == []


def test_decline_and_alert_rules(fi, card):
    alert = threshold(fi, amount=100, action="alert")
    decline = make_rule(fi, "blocked_mcc", action="decline", mccs=["7995"])
    only_alert = screen(card=card, amount=101, currency="EUR", merchant=MERCHANT, now=NOW)
    assert [hit.rule.pk for hit in only_alert.hits] == [alert.pk]
    assert not only_alert.declined and only_alert.declining == []
    both = screen(
        card=card, amount=101, currency="EUR", merchant={**MERCHANT, "mcc": "7995"}, now=NOW
    )
    assert [rule.pk for rule, _ in both.hits] == [alert.pk, decline.pk]  # creation order
    assert both.declined
    assert both.declining == [Hit(decline, {"mcc": "7995"})]


def test_screening_writes_nothing_and_takes_at_most_two_queries(fi, card):
    threshold(fi, amount=1)
    make_rule(fi, "velocity_count", window_seconds=60, max_count=1)
    make_rule(fi, "velocity_count", window_seconds=3600, max_count=5)
    make_rule(fi, "velocity_amount", window_seconds=600, max_amount=1, currency="EUR")
    make_rule(fi, "velocity_amount", window_seconds=600, max_amount=1, currency="USD")
    make_rule(fi, "blocked_mcc", mccs=["5411"])
    make_rule(fi, "blocked_country", countries=["276"])
    pay(card, at=NOW - seconds(30))
    pay(card, at=NOW - seconds(120))
    with CaptureQueriesContext(connection) as queries:
        screening = screen(card=card, amount=100, currency="EUR", merchant=MERCHANT, now=NOW)
    assert len(queries) == 2
    assert all(query["sql"].lstrip().upper().startswith("SELECT") for query in queries)
    assert [api_data(details, stored=False) for _, details in screening.hits] == [
        {"amount": 100, "thresholdAmount": 1, "currency": "EUR", "riskLevel": "low"},
        {"count": 2, "maxCount": 1, "windowSeconds": 60},
        {"total": 300, "maxAmount": 1, "currency": "EUR", "windowSeconds": 600},
        {"mcc": "5411"},
        {"countryCode": "276"},
    ]


def test_without_velocity_rules_screening_is_one_query(fi, card):
    threshold(fi, amount=1)
    make_rule(fi, "velocity_amount", window_seconds=600, max_amount=1, currency="USD")
    with CaptureQueriesContext(connection) as queries:
        screen(card=card, amount=100, currency="EUR", merchant=None, now=NOW)
    assert len(queries) == 1  # the USD velocity rule cannot apply to a EUR payment
