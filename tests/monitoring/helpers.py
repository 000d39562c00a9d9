"""Set-up shared by the monitoring tests: active cards, rules made through the services, and
payments written straight into the card's payment log (what card authorizations and card
transfers write when they approve one)."""

from datetime import UTC, datetime, timedelta

from cards.models import Card, CardPayment
from events.models import Event
from events.payloads import event_payload
from monitoring.models import MonitoringRule
from monitoring.services import alerts_raise, monitoring_rule_create, screen
from tests.cards.helpers import make_institution, new_card

# A payment's merchant as the services take it (the domain's names) ...
MERCHANT = {"name": "Corner Shop", "mcc": "5411", "country_code": "276", "channel": "pos"}
# ... and as an alert keeps it (`monitoring.services.alerts.MERCHANT_FIELDS`) and the API shows it.
MERCHANT_SNAPSHOT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def active_card(fi=None, *, risk_level: str = Card.RiskLevel.LOW) -> Card:
    card = new_card(fi or make_institution(), status=Card.Status.ACTIVE)
    if risk_level != card.risk_level:
        Card.objects.filter(pk=card.pk).update(risk_level=risk_level)
        card.risk_level = risk_level
    return card


def make_rule(fi, kind: str, action: str = "alert", **parameters) -> MonitoringRule:
    return monitoring_rule_create(
        institution=fi, name=f"{kind} {action}", kind=kind, action=action, **parameters
    )


def threshold(fi, amount=10_000, currency="EUR", action="alert", **extra) -> MonitoringRule:
    return make_rule(fi, "amount_threshold", action, amount=amount, currency=currency, **extra)


def pay(card: Card, amount: int = 100, currency: str = "EUR", *, at: datetime) -> CardPayment:
    """An approved payment of `card` at `at` (counted on its chain, as `count_payment` does)."""
    return CardPayment.objects.create(
        card_id=card.lineage_root_id, amount=amount, currency=currency, created_at=at
    )


def raise_alerts(card, amount=100, currency="EUR", merchant=MERCHANT, **kwargs):
    """Screen a payment and raise its alerts (an authorization unless told otherwise)."""
    screening = screen(card=card, amount=amount, currency=currency, merchant=merchant)
    kwargs.setdefault("subject_type", "authorization")
    kwargs.setdefault("subject_id", "auth_TEST")
    return alerts_raise(
        screening=screening,
        card=card,
        amount=amount,
        currency=currency,
        merchant=merchant,
        **kwargs,
    )


def alert_events(type_: str = "monitoring.alert_raised") -> list[dict]:
    events = Event.objects.filter(type=type_).order_by("created_at", "id")
    return [event_payload(event)["data"] for event in events]


def seconds(n: int) -> timedelta:
    return timedelta(seconds=n)
