"""SEPA Instant through the simulated clearing: the wall time of N instant payments, each from
its POST to its settlement (issue 50 item 4; bench/README.md, "sepa_instant.py").

Run by hand, never by the tests:

    .venv/bin/python bench/sepa_instant.py                    # 200 orders, one client
    .venv/bin/python bench/sepa_instant.py --orders 500 --concurrency 4 --drop

Recreates its database (tx_bench_instant) on the service's PostgreSQL server and runs the
service under gunicorn with production settings, the simulated clearing its SEPA Instant
clearing (`SEPA_INSTANT_CLEARING`, which production settings leave unset) and the scheme's
10-second timeout. Set-up, not
measured: an institution with an `initiation` SEPA profile, a customer with a loaded EUR
account and a SEPA external account (an IBAN no scenario names: settled). Then N
`POST /TX/v2/payment-orders` of rail `sepa_inst` from `--concurrency` clients: each order's time
is from sending its POST to holding its `settled` answer (the POST answers once the clearing
has; an answer not settled yet would be polled with GET until it is). Prints p50/p90/p99/max,
orders per second, and checks the ledger after (`ledger_breaches`).
"""

import argparse
import http.client
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

from common import (  # noqa: E402  (bench/common.py)
    call,
    create_tenant,
    drop_database,
    expect,
    free_port,
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

DATABASE = "tx_bench_instant"
LOG_FILE = ROOT / ".data" / "bench" / "sepa_instant-gunicorn.log"
INSTITUTION = "TX Bench Instant"
AMOUNT = 1_000  # EUR 10.00 an order
IBAN = "DE89370400440532013000"  # no scenario: the clearing settles it
EUR_PRODUCT = {"code": "CBSFinancialContractTypeAPI", "name": "Checking (EUR)", "currency": "EUR"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=1, help="clients (default 1)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    return parser.parse_args()


def main():
    args = parse_args()
    admin_url = server_url()
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(with_database(admin_url, DATABASE), rate_limit=0))
    os.environ["RAILS_DIR"] = tempfile.mkdtemp(prefix="tx-bench-rails-")
    # Production settings name no clearing: the simulated one, explicitly.
    os.environ["SEPA_INSTANT_CLEARING"] = "sandbox.simulated_clearing.SimulatedClearing"
    run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], check=True)
    import django

    django.setup()
    logging.disable(logging.INFO)
    from institutions import scopes
    from institutions.models import Institution
    from payments.models import SepaProfile

    api_key = create_tenant(INSTITUTION, "EUR", scopes=tuple(scopes.ALL))
    institution = Institution.objects.get(name=INSTITUTION)
    SepaProfile.objects.create(
        institution=institution,
        kind="initiation",
        bic="COBADEFFXXX",
        settlement_iban="BE71096123456769",
    )
    port = free_port()
    gunicorn = start_gunicorn(port, args.workers, args.threads, LOG_FILE)
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        account_id, external_id = world(port, api_key, args.orders)
        print(
            f"Service: gunicorn, {args.workers} workers x {args.threads} threads, production "
            f"settings, the simulated clearing; {args.orders} instant orders of EUR "
            f"{AMOUNT / 100:.2f} from {args.concurrency} client(s)"
        )
        times, outcomes, wall = drive(port, api_key, account_id, external_id, args)
    finally:
        stop_gunicorn(gunicorn)
    report(times, outcomes, wall)
    from accounts.verification import ledger_breaches

    breaches = ledger_breaches()
    print(f"ledger: {'whole' if not breaches else breaches}")
    if args.drop:
        from django.db import connections

        connections.close_all()
        drop_database(admin_url, DATABASE)


def world(port: int, api_key: str, orders: int) -> tuple[str, str]:
    """A customer, an EUR account loaded for every order, and a SEPA external account."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    customer = expect(
        *call(
            conn,
            api_key,
            "POST",
            "/TX/v2/customers",
            {"firstName": "Bench", "lastName": "Customer", "countryId": "276"},
        ),
        201,
    )["customerId"]
    product = expect(*call(conn, api_key, "POST", "/TX/v2/products/accounts", EUR_PRODUCT), 201)
    account = expect(
        *call(
            conn,
            api_key,
            "POST",
            "/TX/v2/accounts",
            {"customerId": customer, "productRid": product["rid"]},
        ),
        201,
    )["accountId"]
    load = {"direction": "credit", "amount": AMOUNT * orders * 2, "currency": "EUR"}
    expect(*call(conn, api_key, "POST", f"/TX/v2/accounts/{account}/adjustments", load), 201)
    external = expect(
        *call(
            conn,
            api_key,
            "POST",
            "/TX/v2/external-accounts",
            {
                "customerId": customer,
                "holderName": "Ada Lovelace",
                "countryCode": "276",
                "currency": "EUR",
                "sepa": {"iban": IBAN, "bic": "DEUTDEFF"},
            },
        ),
        201,
    )["externalAccountId"]
    conn.close()
    return account, external


def drive(port, api_key, account_id, external_id, args):
    body = {
        "accountId": account_id,
        "externalAccountId": external_id,
        "direction": "credit",
        "amount": AMOUNT,
        "currency": "EUR",
        "rail": "sepa_inst",
    }
    times: list[float] = []
    outcomes: dict[str, int] = {}
    lock = threading.Lock()
    counter = iter(range(args.orders))

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            with lock:
                if next(counter, None) is None:
                    break
            started = time.perf_counter()
            status, order = call(conn, api_key, "POST", "/TX/v2/payment-orders", body)
            while status == 201 and order["status"] in ("approved", "sent"):
                time.sleep(0.01)
                path = f"/TX/v2/payment-orders/{order['paymentOrderId']}"
                status, order = call(conn, api_key, "GET", path)
            took = time.perf_counter() - started
            outcome = order["status"] if status in (200, 201) else f"http {status}"
            with lock:
                times.append(took)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(args.concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, outcomes, time.perf_counter() - started


def report(times: list[float], outcomes: dict[str, int], wall: float) -> None:
    ordered = sorted(times)
    ms = [value * 1000 for value in ordered]
    print(f"outcomes: {outcomes}")
    print(
        f"POST to settled, ms: p50 {percentile(ms, 0.50):.1f}  p90 {percentile(ms, 0.90):.1f}  "
        f"p99 {percentile(ms, 0.99):.1f}  max {ms[-1]:.1f}  ({len(ms)} orders, "
        f"{len(ms) / wall:.1f}/s over {wall:.1f} s)"
    )


if __name__ == "__main__":
    main()
