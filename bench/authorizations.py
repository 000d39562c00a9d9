"""Card authorizations over HTTP: TX deciding alone, then a program deciding (issue 31 item 6).

    .venv/bin/python bench/authorizations.py [--concurrency 8] [--seconds 10] [--drop]

Recreates a database of its own (tx_bench_auth), starts the service under gunicorn with
production settings (but for loopback http to the program: bench/settings.py), makes a card per
client on a funded account, and drives POST /TX/v2/card-authorizations in runs: TX alone (no
decisioning endpoint yet), then a program on loopback (a ThreadingHTTPServer in this
process that checks the Standard Webhooks signature and answers `{"approved": true}` after
`--program-ms`) as the institution's live endpoint. Then verify_ledger. bench/README.md explains
every step.
"""

import argparse
import http.client
import json
import logging
import os
import random
import sys
import threading
import time
import uuid
import warnings
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import (  # noqa: E402  (bench/common.py)
    call,
    create_tenant,
    drop_database,
    expect,
    free_port,
    open_accounts,
    percentile,
    recreate_database,
    run,
    server_url,
    service_environment,
    start_gunicorn,
    stop_gunicorn,
    wait_until_up,
    with_database,
)
from cpu import tree_cpu_seconds  # noqa: E402  (bench/cpu.py)

DATABASE = "tx_bench_auth"
LOG_FILE = ROOT / ".data" / "bench" / "authorizations-gunicorn.log"
INSTITUTION = "TX Bench Authorizations Bank"
CURRENCY = "EUR"
LOAD_AMOUNT = 10**12  # minor units on each card's account: authorizations of 1..100 never drain it
CARD_LIMIT = 10**12  # each card's limits (per transaction, day, month, cash): never reached
# The rate limit is on, as in production, and never bites (bench/transfers.py's reasoning).
RATE_LIMIT = 10**7
MERCHANT = {"name": "Bench Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}
TIMEOUT_MS = 3000  # the endpoint's timeoutMs: the most TX waits, far above the program's delay
# Each run is preceded by this many seconds of the same load, not counted: every gunicorn
# worker's first requests (imports, connections, caches; a keep-alive client stays on one
# worker) and the run before's requests still in flight stay out of what is measured.
WARMUP = 2


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8, help="clients (default 8)")
    parser.add_argument("--seconds", type=int, default=10, help="each run's length (default 10)")
    parser.add_argument(
        "--cards", type=int, default=0, help="cards, one account each (default: --concurrency)"
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker (default 2)")
    parser.add_argument(
        "--program-ms",
        default="50,500",
        help="the program runs: its answer's delay in ms, comma-separated (default 50,500; "
        "empty: none)",
    )
    parser.add_argument(
        "--alone",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the run with TX deciding alone, first (default on)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=WARMUP,
        help=f"seconds of the same load before each run, not counted (default {WARMUP})",
    )
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    args = parser.parse_args()
    try:
        args.program_ms = [int(ms) for ms in args.program_ms.split(",") if ms.strip()]
    except ValueError:
        parser.error("--program-ms: whole milliseconds, comma-separated")
    if any(not 0 <= ms < TIMEOUT_MS for ms in args.program_ms):
        parser.error(f"--program-ms: each from 0 to below the endpoint's {TIMEOUT_MS} ms")
    if not args.alone and not args.program_ms:
        parser.error("nothing to run: --no-alone and no --program-ms")
    args.cards = args.cards or args.concurrency
    return args


# --- The program: a decisioning endpoint on loopback, in this process


class Program:
    """`ThreadingHTTPServer` on 127.0.0.1: verifies each request's Standard Webhooks signature
    with the endpoint's secret, then answers `{"approved": true}` after `delay` seconds, signed
    for the request as docs/decisioning.md's signer does ("Signed answers": TX refuses an
    unsigned answer); 401 without waiting when the signature is wrong: TX then counts a
    failure."""

    def __init__(self):
        self.delay = 0.0
        self.secret: str | None = None
        self.calls = Counter()  # "verified", "bad signature"
        self.lock = threading.Lock()
        program = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                from datetime import UTC, datetime

                from standardwebhooks import Webhook

                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {name.lower(): value for name, value in self.headers.items()}
                signed = {}
                try:
                    Webhook(program.secret).verify(body, headers, json_parse=False)
                except Exception:  # noqa: BLE001 (any failure to verify is a refusal)
                    program.count("bad signature")
                    status, answer = 401, b'{"error": "bad signature"}'
                else:
                    program.count("verified")
                    time.sleep(program.delay)
                    status, answer = 200, b'{"approved": true}'
                    now, message_id = datetime.now(tz=UTC), headers["webhook-id"]
                    signed = {
                        "webhook-id": message_id,
                        "webhook-timestamp": str(int(now.timestamp())),
                        "webhook-signature": Webhook(program.secret).sign(
                            message_id, now, answer.decode()
                        ),
                    }
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                for name, value in signed.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 128  # socketserver's 5 would drop connections under load

            def handle_error(self, request, client_address):
                pass  # a call TX gave up on (its timeout) is counted by TX

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self, what: str) -> None:
        with self.lock:
            self.calls[what] += 1

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/decide"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- Data: a card per client, each on its own funded account


def issue_cards(port: int, api_key: str, count: int) -> list[str]:
    """`count` active virtual prepaid cards, each on a new account loaded with LOAD_AMOUNT and
    with every limit at CARD_LIMIT, via the API."""
    customer_id, account_ids = open_accounts(port, api_key, count, CURRENCY, LOAD_AMOUNT)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    products = expect(*call(conn, api_key, "GET", "/TX/v2/products/cards"), 200)
    product = next(
        p
        for p in products["data"]
        if p["accountKind"] == "prepaid" and "virtual" in p["forms"] and p["status"] == "active"
    )
    card_ids = []
    for account_id in account_ids:
        body = {
            "accountId": account_id,
            "customerId": customer_id,
            "cardProductRid": product["rid"],
            "form": "virtual",
            "status": "active",
        }
        card = expect(*call(conn, api_key, "POST", "/TX/v2/cards", body), 201)
        limits = dict.fromkeys(("perTransaction", "daily", "monthly", "dailyCash"), CARD_LIMIT)
        path = f"/TX/v2/cards/{card['cardId']}/limits"
        expect(*call(conn, api_key, "PATCH", path, limits), 200)
        card_ids.append(card["cardId"])
    conn.close()
    return card_ids


# --- The decisioning endpoint: created before the first program run (TX alone runs first)


def create_endpoint(port: int, api_key: str, program: Program) -> None:
    """The institution's live endpoint at the program, `onFailure` standin; the program
    verifies with its secret."""
    body = {"url": program.url, "timeoutMs": TIMEOUT_MS, "onFailure": "standin", "mode": "live"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    created = expect(*call(conn, api_key, "POST", "/TX/v2/decisioning-endpoints", body), 201)
    conn.close()
    program.secret = created["secret"]


# --- The load: C threads, each with its card and one keep-alive connection, for S seconds


def authorization_body(rng: random.Random, card_id: str) -> dict:
    return {
        "cardId": card_id,
        "amount": rng.randint(1, 100),
        "currency": CURRENCY,
        "type": "Goods",
        "merchant": MERCHANT,
    }


@dataclass
class Answer:
    latency: float  # seconds
    outcome: int | str  # HTTP status or the error's name
    decided_by: str | None = None
    approved: bool | None = None
    program_ms: int | None = None  # the program's latency as TX recorded it


def client(port, api_key, card_id, deadline, seed, answers: list[Answer]):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while time.monotonic() < deadline:
        body = json.dumps(authorization_body(rng, card_id))
        headers = {
            "x-api-key": api_key,
            "Content-Type": "application/json",
            "Idempotency-Key": str(uuid.uuid4()),
        }
        started = time.perf_counter()
        try:
            conn.request("POST", "/TX/v2/card-authorizations", body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            answers.append(Answer(time.perf_counter() - started, type(error).__name__))
            conn.close()  # the next request opens a new connection
            continue
        answer = Answer(time.perf_counter() - started, response.status)
        if response.status == 201:
            decided = json.loads(data)
            answer.decided_by, answer.approved = decided["decidedBy"], decided["approved"]
            answer.program_ms = (decided["program"] or {}).get("latencyMs")
        answers.append(answer)
    conn.close()


@dataclass
class Run:
    name: str
    program_ms: int | None
    answers: list[Answer] = field(default_factory=list)
    elapsed: float = 0.0
    app_cpu: float = 0.0
    client_cpu: float = 0.0
    load: str = ""
    program_calls: Counter = field(default_factory=Counter)

    @property
    def created(self) -> list[Answer]:
        return [answer for answer in self.answers if answer.outcome == 201]

    @property
    def errors(self) -> Counter:
        return Counter(a.outcome for a in self.answers if a.outcome != 201)

    @property
    def decided_by(self) -> Counter:
        return Counter(answer.decided_by for answer in self.created)

    @property
    def wanted(self) -> str:
        return "tx" if self.program_ms is None else "program"

    @property
    def ok(self) -> bool:
        return (
            not self.errors
            and bool(self.created)
            and set(self.decided_by) == {self.wanted}
            and all(answer.approved for answer in self.created)
        )


def drive(run_: Run, port, api_key, card_ids, concurrency, seconds, gunicorn_pid, program):
    run_.load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    calls_before = Counter(program.calls)
    app_before = tree_cpu_seconds(gunicorn_pid)
    client_before = time.process_time()  # this process: clients and the program's threads
    started = time.monotonic()
    deadline = started + seconds
    threads = [
        threading.Thread(
            target=client,
            args=(port, api_key, card_ids[number % len(card_ids)], deadline, number, run_.answers),
            daemon=True,
        )
        for number in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run_.elapsed = time.monotonic() - started
    run_.client_cpu = time.process_time() - client_before
    run_.app_cpu = tree_cpu_seconds(gunicorn_pid) - app_before
    run_.program_calls = Counter(program.calls) - calls_before


def bound(run_: Run, slots: int) -> float | None:
    """The most authorizations a second with a program answering in `program_ms`: each holds
    a gunicorn thread and a client that long at least, and there are `slots` of them."""
    if not run_.program_ms:
        return None
    return slots / (run_.program_ms / 1000)


def report(run_: Run, concurrency: int, workers: int, threads: int) -> None:
    created = run_.created
    latencies = sorted(answer.latency * 1000 for answer in created)
    per_second = len(created) / run_.elapsed
    print(f"\n== {run_.name} ==")
    print(f"load average before:  {run_.load} (its warm-up and the runs before it included)")
    print(f"authorizations/s:     {per_second:8.1f}  ({len(created)} in {run_.elapsed:.1f} s)")
    most = bound(run_, min(workers * threads, concurrency))
    if most is not None:
        print(
            f"bound:                {most:8.1f}  (min(gunicorn {workers} x {threads} threads, "
            f"{concurrency} clients) / {run_.program_ms} ms)"
        )
    print(
        f"latency (201s):       p50 {percentile(latencies, 0.50):.1f} ms, "
        f"p95 {percentile(latencies, 0.95):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms"
    )
    program_latencies = sorted(a.program_ms for a in created if a.program_ms is not None)
    if program_latencies:
        print(
            f"program's latency:    p50 {percentile(program_latencies, 0.50)} ms, "
            f"p99 {percentile(program_latencies, 0.99)} ms (as TX recorded it)"
        )
    approved = sum(1 for answer in created if answer.approved)
    print(f"approved:             {approved} of {len(created)}")
    decided = ", ".join(f"{name} {count}" for name, count in run_.decided_by.most_common())
    print(f"decidedBy:            {decided or '-'} (all must be {run_.wanted})")
    if run_.program_ms is not None:
        calls = ", ".join(f"{name} {count}" for name, count in run_.program_calls.most_common())
        print(f"program's requests:   {calls or 'none'}")
    errors = run_.errors
    print(
        f"errors:               {sum(errors.values())} of {len(run_.answers)} {dict(errors) or ''}"
    )
    print(
        f"app CPU:              {1000 * run_.app_cpu / max(len(created), 1):8.2f} ms per "
        "authorization (the gunicorn processes)"
    )
    print(
        f"bench process CPU:    {1000 * run_.client_cpu / max(len(created), 1):8.2f} ms per "
        "authorization (clients and program)"
    )


def main():
    args = parse_args()
    own = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    if own == DATABASE:
        sys.exit(f"DATABASE_URL names {own}, which this benchmark drops; use another database.")
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"Machine: {os.cpu_count()} cores, load average {load} before setup")
    admin_url = server_url()
    url = with_database(admin_url, DATABASE)
    where = conninfo_to_dict(admin_url)
    origin = "DATABASE_URL's" if os.environ.get("DATABASE_URL") else "the embedded"
    print(f"PostgreSQL: {origin} server, host {where.get('host')} port {where.get('port', 5432)}")
    print(f"Database: {DATABASE}, made anew")
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(url, rate_limit=RATE_LIMIT, settings="bench.settings"))
    # One institution is the whole load here: its calls in flight are bounded by the threads
    # alone (the bound per institution protects other tenants, docs/decisioning.md "Calls in
    # flight", and would decide half of these calls by `onFailure` at once: `busy`).
    os.environ["DECISIONING_CALLS_PER_INSTITUTION"] = str(args.threads)
    run([sys.executable, "manage.py", "migrate", "--noinput"], check=True)
    import django

    django.setup()
    logging.disable(logging.INFO)
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: no collectstatic
    api_key = create_tenant(INSTITUTION, CURRENCY, scopes=("network",))

    program = Program()
    port = free_port()
    print(
        f"Service: gunicorn config.wsgi, production settings (bench.settings: decisioning to "
        f"http on loopback allowed), {args.workers} workers x {args.threads} threads on "
        f"127.0.0.1:{port} (log: {LOG_FILE.relative_to(ROOT)})"
    )
    print(f'Program: {program.url}, verifies the signature, answers {{"approved": true}}')
    gunicorn = start_gunicorn(port, args.workers, args.threads, LOG_FILE)
    runs = []
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        card_ids = issue_cards(port, api_key, args.cards)
        print(
            f"Data: 1 institution, 1 API key (full + network), {len(card_ids)} active cards, each "
            f"on its own account of {LOAD_AMOUNT}, limits {CARD_LIMIT}; {args.concurrency} "
            f"clients, client i on card i mod {len(card_ids)}"
        )
        plan = ([Run("TX alone", None)] if args.alone else []) + [
            Run(f"program answering in {ms} ms", ms) for ms in args.program_ms
        ]
        for run_ in plan:
            if run_.program_ms is not None and program.secret is None:
                create_endpoint(port, api_key, program)
            program.delay = (run_.program_ms or 0) / 1000
            print(
                f"\nRunning {run_.name}: {args.concurrency} clients, {args.warmup} s of warm-up, "
                f"then {args.seconds} s ..."
            )
            load = (port, api_key, card_ids, args.concurrency)
            warm_up = Run("warm-up", run_.program_ms)
            if args.warmup:
                drive(warm_up, *load, args.warmup, gunicorn.pid, program)
            drive(run_, *load, args.seconds, gunicorn.pid, program)
            if args.warmup and not warm_up.ok:
                print(
                    f"  warm-up: {len(warm_up.created)} decided by {dict(warm_up.decided_by)}, "
                    f"errors {dict(warm_up.errors)}"
                )
            runs.append(run_)
    finally:
        stop_gunicorn(gunicorn)
        program.stop()

    from django.db import connections

    connections.close_all()
    ledger = run([sys.executable, "manage.py", "verify_ledger"])

    for run_ in runs:
        report(run_, args.concurrency, args.workers, args.threads)
    print("\n== Summary ==")
    print("| run | authorizations/s | bound | p50 | p95 | p99 | decidedBy | errors |")
    print("|---|---|---|---|---|---|---|---|")
    slots = min(args.workers * args.threads, args.concurrency)
    for run_ in runs:
        latencies = sorted(answer.latency * 1000 for answer in run_.created)
        most = bound(run_, slots)
        decided = ", ".join(f"{name} {count}" for name, count in run_.decided_by.most_common())
        print(
            f"| {run_.name} | {len(run_.created) / run_.elapsed:.1f} | "
            f"{'-' if most is None else f'{most:.1f}'} | "
            f"{percentile(latencies, 0.50):.1f} ms | {percentile(latencies, 0.95):.1f} ms | "
            f"{percentile(latencies, 0.99):.1f} ms | {decided} | {sum(run_.errors.values())} |"
        )
    print(f"\nverify_ledger on {DATABASE}: exit {ledger.returncode}")
    print("  " + (ledger.stdout + ledger.stderr).strip().replace("\n", "\n  "))

    if args.drop:
        drop_database(admin_url, DATABASE)
        print(f"\nDropped {DATABASE}.")
    else:
        print(f"\nLeft {DATABASE} in place (the next run makes it anew); --drop removes it.")
    failed = [run_.name for run_ in runs if not run_.ok]
    if failed:
        print(f"FAILED: {', '.join(failed)} (an error, a decline, or decided by another)")
    sys.exit(1 if failed or ledger.returncode else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("Interrupted (gunicorn, if it was started, is stopped).")
