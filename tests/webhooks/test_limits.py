"""What a slow or hostile receiver can hold (docs/webhooks.md, "Limits"), against receivers
that misbehave on purpose on real loopback sockets (`RawReceiver`): one wall-clock deadline per
attempt however the answer trickles (headers, body, TLS handshake, many unreachable addresses),
a cap on the bytes read, and at most WEBHOOK_SLOTS_PER_INSTITUTION attempts of one institution
at once (a slow institution next to a fast one, in a real procrastinate worker).

Every trickle sends a byte every 0.2 s: a per-read timeout (what `requests` has) would never
fire, and the attempt would last as long as the receiver likes (30 s here, hours in life).
"""

import datetime
import ipaddress
import logging
import socket
import ssl
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.db import connection, transaction
from django.utils import timezone

from core.outbound import resolver, transport
from events.services import emit
from tests.factories import InstitutionFactory
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.services import deliveries as deliveries_module
from webhooks.services import delivery_attempt, webhook_endpoint_create
from webhooks.services.slots import delivery_slot
from webhooks.tasks import QUEUE, PlannedRetryLogFilter, SlotsBusy, deliver

from .helpers import (
    RawReceiver,
    Receiver,
    huge_body,
    huge_headers,
    ok,
    pending_delivery,
    read_request,
    run_jobs,
    trickle_body,
    trickle_headers,
    trickle_tls,
)

pytestmark = pytest.mark.django_db

DEADLINE = 1  # WEBHOOK_TIMEOUT_SECONDS here
SLACK = 0.5  # what a loaded machine may add to it
CAP = 32 * 1024  # WEBHOOK_MAX_RESPONSE_BYTES (the default)


@pytest.fixture(autouse=True)
def limits(settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = DEADLINE
    settings.WEBHOOK_MAX_RESPONSE_BYTES = CAP
    settings.WEBHOOK_RETRY_BASE_SECONDS = 10


@pytest.fixture
def raw():
    started = []

    def start(*answers):
        started.append(RawReceiver(*answers))
        return started[-1]

    yield start
    for receiver in started:
        receiver.stop()


def post(url: str, *, max_response_bytes: int = CAP, timeout: float = DEADLINE):
    return transport.post(
        url, body=b"{}", headers={}, timeout=timeout, max_response_bytes=max_response_bytes
    )


def timed(call):
    began = time.monotonic()
    result = call()
    return result, time.monotonic() - began


# --- One deadline
@pytest.mark.parametrize("answer", [trickle_headers, trickle_body], ids=["headers", "body"])
def test_a_trickled_answer_ends_at_the_deadline_as_a_timeout_and_is_retried(answer, raw):
    receiver = raw(answer, ok)  # the first connection trickles, the next ones answer at once
    delivery, _ = pending_delivery(receiver.url())

    retry_at, elapsed = timed(lambda: delivery_attempt(delivery_id=delivery.pk))

    assert DEADLINE <= elapsed < DEADLINE + SLACK
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.succeeded, attempt.error, attempt.response_excerpt) == (
        None,
        False,
        "timeout: no response within 1 s",
        "",
    )
    assert DEADLINE * 1000 <= attempt.duration_ms < (DEADLINE + SLACK) * 1000
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == (
        "pending",
        1,
        retry_at,
    )
    assert timezone.now() <= retry_at

    # The retry (the receiver answers at once now) succeeds.
    assert delivery_attempt(delivery_id=delivery.pk) is None
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, receiver.connections) == ("succeeded", 2, 2)


def test_a_tls_handshake_sent_a_byte_at_a_time_ends_at_the_deadline(raw):
    receiver = raw(trickle_tls)
    outcome, elapsed = timed(lambda: post(receiver.url("https")))
    assert DEADLINE <= elapsed < DEADLINE + SLACK
    assert (outcome.status_code, outcome.error) == (None, "timeout: no response within 1 s")


@pytest.fixture
def unreachable():
    """A loopback port that never completes a connection: a listener with a backlog of 0,
    already full (its SYNs go unanswered, as a blackholed address's do)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.1)
    with pytest.raises(TimeoutError):  # the premise: connecting hangs
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    yield port
    for filler in fillers:
        filler.close()
    listener.close()


def test_each_address_of_a_host_gets_only_the_time_left(unreachable, monkeypatch):
    """urllib3 gives each address the whole connect timeout: five unreachable addresses would
    take five timeouts. The attempt still ends at its one deadline."""
    real = resolver.addresses

    def addresses(host, **kwargs):
        if host == "unreachable.example":
            return ["127.0.0.1"] * 5
        return real(host, **kwargs)

    monkeypatch.setattr(resolver, "addresses", addresses)
    outcome, elapsed = timed(lambda: post(f"http://unreachable.example:{unreachable}/hooks"))
    assert DEADLINE <= elapsed < DEADLINE + SLACK
    assert (outcome.status_code, outcome.error) == (None, "timeout: no connection within 1 s")


# --- A cap on the bytes read
def test_of_a_10_mb_body_only_the_excerpt_is_asked_for_and_the_cap_is_never_passed(raw):
    receiver = raw(huge_body)
    outcome = post(receiver.url(), timeout=5)
    assert (outcome.status_code, outcome.error, outcome.response_excerpt) == (200, "", "b" * 500)
    assert outcome.bytes_read <= CAP
    # With a cap just above what the excerpt needs, the read-ahead is cut at the cap.
    small = post(receiver.url(), timeout=5, max_response_bytes=4096)
    assert (small.status_code, small.response_excerpt, small.bytes_read) == (200, "b" * 500, 4096)


def test_a_10_mb_body_is_a_success_recorded_with_its_excerpt(raw):
    receiver = raw(huge_body)
    delivery, _ = pending_delivery(receiver.url())
    (result, elapsed) = timed(lambda: delivery_attempt(delivery_id=delivery.pk))
    assert result is None and elapsed < DEADLINE
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.succeeded, attempt.response_excerpt) == (
        200,
        True,
        "b" * 500,
    )


def test_headers_over_the_cap_fail_the_attempt_having_read_only_the_cap(raw):
    receiver = raw(huge_headers)
    outcome = post(receiver.url(), timeout=5)
    assert (outcome.status_code, outcome.error, outcome.bytes_read) == (
        None,
        f"response too large: its headers exceed {CAP} bytes",
        CAP,
    )
    delivery, _ = pending_delivery(receiver.url())
    assert delivery_attempt(delivery_id=delivery.pk) is not None  # retried as usual
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.succeeded, attempt.error) == (
        None,
        False,
        f"response too large: its headers exceed {CAP} bytes",
    )


def test_more_headers_than_http_allows_are_an_invalid_response(raw):
    def many_headers(conn):
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + b"X-A: 1\r\n" * 200 + b"\r\n")

    outcome = post(raw(many_headers).url())
    assert (outcome.status_code, outcome.error) == (
        None,
        "invalid response: not a well-formed HTTP/1.x status line and headers",
    )


# --- Slots per institution
def hold_slot(institution_id, taken: threading.Event, release: threading.Event, got: list):
    """In a thread of its own (its own database session): hold a slot until `release`."""
    try:
        with delivery_slot(institution_id=institution_id) as slot:
            got.append(slot)
            taken.set()
            release.wait(10)
    finally:
        connection.close()


def holding(institution_id):
    """Start a thread holding one of the institution's slots; returns (its slot, release)."""
    taken, release, got = threading.Event(), threading.Event(), []
    thread = threading.Thread(target=hold_slot, args=(institution_id, taken, release, got))
    thread.start()
    assert taken.wait(10)

    def done():
        release.set()
        thread.join(10)

    return got[0], done


def test_an_institution_has_its_number_of_slots_and_no_more(settings):
    settings.WEBHOOK_SLOTS_PER_INSTITUTION = 2
    institution, other = InstitutionFactory(), InstitutionFactory()
    first, release_first = holding(institution.pk)
    second, release_second = holding(institution.pk)
    try:
        assert {first, second} == {0, 1}
        third, release_third = holding(institution.pk)
        release_third()
        assert third is None  # all taken: nothing held
        elsewhere, release_elsewhere = holding(other.pk)
        release_elsewhere()
        assert elsewhere == 0  # another institution's slots are its own
    finally:
        release_first()
    again, release_again = holding(institution.pk)
    release_again()
    release_second()
    assert again == first  # released when the holder is done


def test_no_free_slot_reschedules_the_job_without_an_attempt_while_others_go(settings, raw):
    settings.WEBHOOK_SLOTS_PER_INSTITUTION = 1
    receiver = raw(ok)
    busy_delivery, _ = pending_delivery(receiver.url())
    other_delivery, _ = pending_delivery(receiver.url())
    busy_institution = busy_delivery.endpoint.institution_id
    _, release = holding(busy_institution)  # a slow attempt of the same institution
    try:
        before = timezone.now()
        with pytest.raises(SlotsBusy) as raised:
            deliver(delivery_id=busy_delivery.pk)
        # Another institution's delivery goes meanwhile.
        assert delivery_attempt(delivery_id=other_delivery.pk) is None
    finally:
        release()
    wait = (raised.value.retry_at - before).total_seconds()
    assert 1 <= wait <= DEADLINE + 1  # a few seconds: at most the time a slot stays taken
    assert not WebhookAttempt.objects.filter(delivery=busy_delivery).exists()
    busy_delivery.refresh_from_db()
    assert (busy_delivery.status, busy_delivery.attempts, busy_delivery.last_error) == (
        "pending",
        0,
        "",
    )
    assert WebhookDelivery.objects.get(pk=other_delivery.pk).status == "succeeded"
    assert receiver.connections == 1
    # The slot free again, the delivery is made.
    assert delivery_attempt(delivery_id=busy_delivery.pk) is None
    # A planned retry, logged by the worker without a traceback.
    exc_info = (SlotsBusy, raised.value, None)
    record = logging.LogRecord("procrastinate.worker", logging.ERROR, "", 0, "Error", (), exc_info)
    assert PlannedRetryLogFilter().filter(record) and record.exc_info is None


def jobs_of(delivery_ids) -> dict[str, tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT args->>'delivery_id', status, attempts, scheduled_at FROM procrastinate_jobs "
            "WHERE queue_name = %s",
            [QUEUE],
        )
        return {row[0]: row[1:] for row in cursor.fetchall() if row[0] in delivery_ids}


@pytest.mark.django_db(transaction=True)
def test_a_slow_institution_keeps_to_its_slots_while_another_is_delivered(settings, monkeypatch):
    """K=1. Institution A's receiver takes 1 s to answer; A has two events (two resources, so
    two jobs that may run at once), B one. In a real worker with three slots: one of A's
    attempts runs, A's other job goes back to the queue without an attempt, and B's delivery
    is made while A's slow attempt holds A's slot. Later, A's second event is delivered too."""
    settings.WEBHOOK_SLOTS_PER_INSTITUTION = 1
    settings.WEBHOOK_TIMEOUT_SECONDS = 5
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    monkeypatch.setattr(deliveries_module, "slot_wait", lambda: 60.0)  # not due in this run
    slow, fast = Receiver(), Receiver()
    slow.delay = 1.0
    try:
        a, b = InstitutionFactory(), InstitutionFactory()
        webhook_endpoint_create(institution=a, url=slow.url, event_types=["*"])
        webhook_endpoint_create(institution=b, url=fast.url, event_types=["*"])
        for institution, object_id in ((a, "cus_a1"), (a, "cus_a2"), (b, "cus_b1")):
            with transaction.atomic():
                emit(
                    institution=institution,
                    type="customer.created",
                    object_type="customer",
                    object_id=object_id,
                    data={"customerId": object_id},
                )
        a_deliveries = list(WebhookDelivery.objects.filter(endpoint__institution=a))
        assert len(a_deliveries) == 2

        run_jobs(concurrency=3)

        [a_request] = slow.received  # one of A's two: A's one slot
        [b_request] = fast.received
        assert b_request.at < a_request.at + slow.delay  # B went while A's attempt was slow
        attempted = next(d for d in a_deliveries if d.event_id == a_request.webhook_id)
        waiting = next(d for d in a_deliveries if d is not attempted)
        attempted.refresh_from_db()
        waiting.refresh_from_db()
        assert (attempted.status, attempted.attempts) == ("succeeded", 1)
        assert (waiting.status, waiting.attempts, waiting.last_error) == ("pending", 0, "")
        assert not WebhookAttempt.objects.filter(delivery=waiting).exists()
        [(status, job_attempts, scheduled_at)] = jobs_of({waiting.pk}).values()
        assert (status, job_attempts) == ("todo", 1)  # back in the queue, not failed
        assert scheduled_at > timezone.now()
        assert WebhookDelivery.objects.get(endpoint__institution=b).status == "succeeded"

        with connection.cursor() as cursor:  # due now
            cursor.execute(
                "UPDATE procrastinate_jobs SET scheduled_at = now() WHERE queue_name = %s "
                "AND status = 'todo'",
                [QUEUE],
            )
        run_jobs()
        waiting.refresh_from_db()
        assert (waiting.status, waiting.attempts) == ("succeeded", 1)
        assert [request.webhook_id for request in slow.received] == [
            a_request.webhook_id,
            waiting.event_id,
        ]
    finally:
        slow.stop()
        fast.stop()
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s", [QUEUE])


# --- The same over TLS
@pytest.fixture
def tls_server_context(tmp_path):
    """A server TLS context with a self-signed certificate for 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context, str(cert_file)


@pytest.mark.parametrize("answer", [trickle_body, huge_body], ids=["trickled", "10 MB"])
def test_after_a_tls_handshake_the_deadline_and_the_cap_hold_too(answer, raw, tls_server_context):
    """Through the guarded HTTPS pool (trusting the test certificate: `post` itself trusts
    only the public CAs), the response is read through the same bounded reader."""
    server_context, ca_file = tls_server_context

    def over_tls(conn):
        with server_context.wrap_socket(conn, server_side=True) as tls:
            answer(tls)

    receiver = raw(over_tls)
    budget = transport.Budget(deadline=time.monotonic() + DEADLINE, max_bytes=CAP)
    pool = transport.GuardedHTTPSConnectionPool(
        "127.0.0.1", receiver.port, budget=budget, ca_certs=ca_file, cert_reqs="CERT_REQUIRED"
    )
    began = time.monotonic()
    response = pool.urlopen("POST", "/hooks", body=b"{}", preload_content=False, retries=False)
    assert response.status == 200
    if answer is trickle_body:
        with pytest.raises(transport.DeadlinePassed):
            response.read(transport.EXCERPT_BYTES, decode_content=False)
        assert DEADLINE <= time.monotonic() - began < DEADLINE + SLACK
    else:
        assert response.read(transport.EXCERPT_BYTES, decode_content=False) == b"b" * 2000
        assert budget.bytes_read <= CAP
    pool.close()
