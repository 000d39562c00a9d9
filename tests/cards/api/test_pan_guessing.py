"""Card-number guessing over HTTP, in both versions: every PAN that no card of the key's
institution holds counts against the key (card lookups, PAN transfers, PAN authorizations and
returns alike); at 10 in the sliding hour the key gets 429 `rate_limited` on every operation that
takes a PAN, with `Retry-After` until the oldest failure leaves the window, and one
`security.pan_guessing_suspected` event. The 404s themselves are rolled back; the count is not.
Another institution's PAN answers and counts exactly as an unknown one."""

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone
from stdnum import luhn

from cards.models import PanResolutionFailure
from events.models import Event
from institutions import scopes as api_scopes
from tests.authorizations.helpers import MERCHANT
from tests.conftest import Api
from tests.factories import issue_key
from tests.transfers.test_concurrency_http import run_threads

from .helpers import (
    account,
    assert_error,
    created,
    customer,
    error_of,
    issue,
    items_of,
    resource,
    secrets_of,
)

LIMIT = 10
WINDOW = 3600
EVENT = "security.pan_guessing_suspected"
_numbers = itertools.count(1)


@pytest.fixture(autouse=True)
def guessing_settings(settings):
    settings.PAN_GUESSING_MAX_FAILURES = LIMIT
    settings.PAN_GUESSING_WINDOW_SECONDS = WINDOW


def unknown_pan() -> str:
    """A Luhn-valid 16-digit PAN on a BIN no test product uses: no card holds it."""
    body = f"999990{next(_numbers):09d}"
    return body + luhn.calc_check_digit(body)


class World:
    """A key with every scope (the guesser), its institution's card with its PAN, a funded
    account to send to, and a card and PAN of another institution."""

    def __init__(self, api, institution, other_institution):
        self.version = api.version
        self.api_key, secret = issue_key(institution, scopes=api_scopes.ALL)
        self.guesser = Api(api.version, secret)
        holder = customer(self.guesser)
        self.account_id = account(self.guesser, holder, load=50_000)
        self.savings_id = account(self.guesser, holder)  # where PAN transfers send to
        self.card = issue(self.guesser, self.account_id, holder, status="active")
        self.pan = secrets_of(self.guesser, self.card["cardId"])["pan"]
        other_secret = issue_key(other_institution, scopes=api_scopes.ALL)[1]
        self.other = Api(api.version, other_secret)
        theirs = customer(self.other)
        their_card = issue(self.other, account(self.other, theirs), theirs, status="active")
        self.their_pan = secrets_of(self.other, their_card["cardId"])["pan"]

    # -- the operations that take a PAN
    def lookup(self, pan, client=None, **kwargs):
        return (client or self.guesser).post("/card-lookups", {"pan": pan}, **kwargs)

    def transfer(self, pan, client=None):
        body = {
            "source": {"pan": pan},
            "destination": {"accountId": self.savings_id},
            "amount": 100,
            "currency": "EUR",
        }
        return (client or self.guesser).post("/transfers", body)

    def authorize(self, pan=None, client=None, card_id=None):
        body = {"amount": 100, "currency": "EUR", "type": "Goods", "merchant": MERCHANT}
        body.update({"cardId": card_id} if card_id else {"pan": pan})
        return (client or self.guesser).post("/card-authorizations", body)

    def card_return(self, pan, client=None):
        body = {"pan": pan, "amount": 100, "currency": "EUR", "merchant": MERCHANT}
        return (client or self.guesser).post("/card-returns", body)

    def failures(self) -> int:
        return PanResolutionFailure.objects.filter(api_key=self.api_key).count()

    def events(self) -> list:
        return items_of(self.guesser, "/events", type=EVENT, limit=100)


@pytest.fixture
def world(api, institution, other_institution):
    return World(api, institution, other_institution)


def assert_not_found(response, version):
    assert_error(response, version, 404, "not_found", message="No card with this PAN.")


def assert_guessing_refused(response, version) -> int:
    """A 429 of the PAN guard; returns its Retry-After."""
    assert_error(response, version, 429, "rate_limited")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= WINDOW
    return retry_after


def test_the_eleventh_failed_lookup_is_refused_on_every_pan_operation(world):
    v = world.version
    for n in range(1, LIMIT + 1):
        # v1 also without an Idempotency-Key: the failure is kept on both of TXView's paths.
        no_key = {"idempotency_key": None} if v == "v1" and n % 2 else {}
        assert_not_found(world.lookup(unknown_pan(), **no_key), v)
        assert world.failures() == n
    # The 11th: refused before the PAN is resolved, and not counted.
    assert_guessing_refused(world.lookup(unknown_pan()), v)
    # Every PAN operation, even with the PAN of the key's own card.
    for response in (
        world.lookup(world.pan),
        world.transfer(world.pan),
        world.authorize(world.pan),
        world.card_return(world.pan),
    ):
        assert_guessing_refused(response, v)
    assert world.failures() == LIMIT
    # Nothing else changed: the card was neither paid with nor refunded.
    assert items_of(world.guesser, f"/cards/{world.card['cardId']}/transactions") == []
    # The card by its id is not a PAN operation.
    by_id = created(world.authorize(card_id=world.card["cardId"]), v)
    assert by_id["approved"] is True
    # One event, naming the key and the count, never a PAN.
    (event,) = world.events()
    assert (event["objectType"], event["objectId"]) == ("api_key", world.api_key.pk)
    assert event["data"] == {
        "apiKeyId": world.api_key.pk,
        "failures": LIMIT,
        "windowSeconds": WINDOW,
    }
    assert world.pan not in str(event)


def test_failures_of_every_pan_operation_count_together(world):
    v = world.version
    for response in (
        world.transfer(unknown_pan()),
        world.transfer(unknown_pan()),
        world.authorize(unknown_pan()),
        world.authorize(unknown_pan()),
        world.authorize(unknown_pan()),
        world.card_return(unknown_pan()),
    ):
        assert_not_found(response, v)
    # A transfer to an unknown PAN counts too (the source resolves, the destination fails).
    body = {
        "source": {"accountId": world.account_id},
        "destination": {"pan": unknown_pan()},
        "amount": 100,
        "currency": "EUR",
    }
    assert_not_found(world.guesser.post("/transfers", body), v)
    for _ in range(3):
        assert_not_found(world.lookup(unknown_pan()), v)
    assert world.failures() == LIMIT
    assert_guessing_refused(world.transfer(world.pan), v)
    assert_guessing_refused(world.authorize(world.pan), v)
    assert len(world.events()) == 1


def test_another_key_of_the_institution_is_not_affected(world, institution):
    v = world.version
    for _ in range(LIMIT):
        assert_not_found(world.lookup(unknown_pan()), v)
    assert_guessing_refused(world.lookup(world.pan), v)
    colleague = Api(v, issue_key(institution, scopes=api_scopes.ALL)[1])
    assert resource(world.lookup(world.pan, colleague), v)["cardId"] == world.card["cardId"]
    assert created(world.authorize(world.pan, colleague), v)["approved"] is True
    assert created(world.transfer(world.pan, colleague), v)["status"] == "posted"
    assert_not_found(world.lookup(unknown_pan(), colleague), v)
    assert_guessing_refused(world.lookup(world.pan), v)


def test_a_success_does_not_reset_the_count(world):
    v = world.version
    for _ in range(LIMIT - 1):
        assert_not_found(world.lookup(unknown_pan()), v)
    assert resource(world.lookup(world.pan), v)["cardId"] == world.card["cardId"]
    assert created(world.authorize(world.pan), v)["approved"] is True
    assert_not_found(world.lookup(unknown_pan()), v)
    assert_guessing_refused(world.lookup(world.pan), v)


def test_retry_after_is_when_the_oldest_failure_leaves_the_window(world):
    v = world.version
    for _ in range(LIMIT):
        assert_not_found(world.lookup(unknown_pan()), v)
    oldest = PanResolutionFailure.objects.filter(api_key=world.api_key).earliest("created_at")
    # The oldest failure leaves the window in 100 s; the others later.
    oldest.created_at = timezone.now() - timedelta(seconds=WINDOW - 100)
    oldest.save(update_fields=["created_at"])
    assert 98 <= assert_guessing_refused(world.lookup(world.pan), v) <= 100


def test_the_window_passing_lifts_the_refusal(world):
    v = world.version
    for _ in range(LIMIT):
        assert_not_found(world.lookup(unknown_pan()), v)
    assert_guessing_refused(world.lookup(world.pan), v)
    PanResolutionFailure.objects.filter(api_key=world.api_key).update(
        created_at=timezone.now() - timedelta(seconds=WINDOW + 1)
    )
    assert resource(world.lookup(world.pan), v)["cardId"] == world.card["cardId"]
    assert created(world.authorize(world.pan), v)["approved"] is True
    # The count starts again (the old failures are gone); a new crossing, a new event.
    for _ in range(LIMIT):
        assert_not_found(world.lookup(unknown_pan()), v)
    assert world.failures() == LIMIT
    assert_guessing_refused(world.lookup(world.pan), v)
    assert [event["data"]["failures"] for event in world.events()] == [LIMIT, LIMIT]


def test_another_institutions_pan_answers_and_counts_as_an_unknown_one(world):
    v = world.version
    pairs = [
        (world.lookup(world.their_pan), world.lookup(unknown_pan())),
        (world.transfer(world.their_pan), world.transfer(unknown_pan())),
        (world.authorize(world.their_pan), world.authorize(unknown_pan())),
        (world.card_return(world.their_pan), world.card_return(unknown_pan())),
    ]
    for theirs, unknown in pairs:
        assert theirs.status_code == unknown.status_code == 404
        assert error_of(theirs, v) == error_of(unknown, v)
        assert set(theirs.headers) == set(unknown.headers)
    assert world.failures() == 2 * len(pairs)
    for _ in range(LIMIT - world.failures()):
        assert_not_found(world.lookup(world.their_pan), v)
    assert_guessing_refused(world.lookup(world.their_pan), v)
    assert_guessing_refused(world.lookup(unknown_pan()), v)


def test_staff_see_the_event_in_the_admin(world, admin_client):
    for _ in range(LIMIT):
        assert_not_found(world.lookup(unknown_pan()), world.version)
    event = Event.objects.get(type=EVENT)
    changelist = admin_client.get("/admin/events/event/", {"type__exact": EVENT})
    assert [row.pk for row in changelist.context["cl"].result_list] == [event.pk]
    page = admin_client.get(f"/admin/events/event/{event.pk}/change/")
    assert page.status_code == 200
    assert world.api_key.pk in page.content.decode()
    failures = admin_client.get("/admin/cards/panresolutionfailure/")
    assert failures.context["cl"].result_count == LIMIT


@pytest.mark.django_db(transaction=True)
def test_concurrent_failures_crossing_the_threshold_emit_one_event(world):
    v = world.version
    for _ in range(LIMIT - 1):
        assert_not_found(world.lookup(unknown_pan()), v)
    secret = world.guesser.key
    pans = [unknown_pan() for _ in range(8)]

    def guess(index):
        return Api(v, secret).post("/card-lookups", {"pan": pans[index]}).status_code

    statuses = run_threads(8, guess)
    assert set(statuses) <= {404, 429} and 404 in statuses, statuses
    assert world.failures() == LIMIT - 1 + statuses.count(404)
    assert len(world.events()) == 1
    assert Event.objects.filter(type=EVENT).count() == 1
    assert_guessing_refused(world.lookup(world.pan), v)
