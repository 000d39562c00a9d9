"""What the benchmarks share: PostgreSQL databases of their own on the service's server, the
production environment the service runs with, the service under gunicorn, a tenant and its
loaded accounts made through the services and the API, and percentiles."""

import base64
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent


def server_url() -> str:
    """URL of the maintenance database `postgres` on the server the service uses."""
    if os.environ.get("DATABASE_URL"):
        return with_database(os.environ["DATABASE_URL"], "postgres")
    from core import embedded_db

    return embedded_db.server().get_uri()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def recreate_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    wait_on_every_host(with_database(admin_url, name))


def wait_on_every_host(url: str, timeout: float = 30) -> None:
    """With a multi-host URL (a cluster: bench/cluster.py), until every host that answers has
    the database: a replica replays CREATE DATABASE a moment after the primary, and libpq does
    not try the next host when one answers that the database does not exist."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    hosts, ports = str(params.get("host", "")).split(","), str(params.get("port", "")).split(",")
    if len(hosts) < 2:
        return
    params.pop("target_session_attrs", None)
    deadline = time.monotonic() + timeout
    for host, port in zip(hosts, ports, strict=False):
        while True:
            try:
                psycopg.connect(**{**params, "host": host, "port": port}, connect_timeout=2).close()
                break
            except psycopg.OperationalError as error:
                if "does not exist" not in str(error) or time.monotonic() > deadline:
                    break  # a host that is down is not waited for
                time.sleep(0.1)


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def service_environment(
    url: str, *, rate_limit: int, settings: str = "config.settings.production"
) -> dict:
    """Production settings (or `settings`, a module made of them) on the database `url`, with
    keys made for this run only; requests per window per API key and per institution:
    `rate_limit` (0: no limit)."""
    return {
        "DJANGO_SETTINGS_MODULE": settings,
        "DATABASE_URL": url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": "bench:" + base64.b64encode(os.urandom(32)).decode(),
        "PIN_KEY": secrets.token_urlsafe(32),
        "PAN_FINGERPRINT_KEY": secrets.token_urlsafe(32),
        "STAFF_RECOVERY_CODE_KEY": secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",  # plain http on loopback, no TLS proxy
        "RATE_LIMIT_REQUESTS": str(rate_limit),
        "RATE_LIMIT_INSTITUTION_REQUESTS": str(rate_limit),
    }


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, round(fraction * len(sorted_values) + 0.5))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# --- The service: gunicorn, a tenant, accounts


def run(
    command: list[str], check: bool = False, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run one of our own programs (no shell, arguments from the benchmark), output captured;
    in `env` when given, else in this process's environment."""
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)  # noqa: S603
    if check and result.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n{result.stdout}\n{result.stderr}")
    return result


def create_tenant(name: str, currency: str, scopes: tuple[str, ...] = ()) -> str:
    """An institution and an API key of the `full` role (and `scopes`) allowed from
    127.0.0.1, through the services (as `manage.py create_institution` and `create_api_key`
    do); returns the key."""
    from institutions.services import api_key_create, institution_create

    institution, _ = institution_create(name=name, currency=currency)
    issued = api_key_create(
        institution=institution,
        allow=["127.0.0.1/32"],
        role="full",
        scopes=scopes,
        name="bench",
        created_by="bench",
    )
    return issued.secret


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(port: int, workers: int, threads: int, log_file: Path) -> subprocess.Popen:
    """`gunicorn config.wsgi` on 127.0.0.1:`port` in this process's environment."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    command = [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    command += ["--threads", str(threads)]
    with open(log_file, "w") as log:
        return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603


def wait_until_up(
    port: int, process: subprocess.Popen, log_file: Path, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}; see {log_file}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/TX/v2/customers")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer within {timeout} s; see {log_file}")


def stop_gunicorn(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def call(conn, api_key: str, method: str, path: str, body: dict | None = None):
    """One API request; returns (status, parsed body)."""
    headers = {"x-api-key": api_key}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        headers["Idempotency-Key"] = str(uuid.uuid4())
        data = json.dumps(body)
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    return response.status, json.loads(response.read() or b"null")


def expect(status: int, body, wanted: int):
    if status != wanted:
        raise RuntimeError(f"Setup request answered {status}, not {wanted}: {body}")
    return body


def open_accounts(
    port: int, api_key: str, count: int, currency: str, load: int
) -> tuple[str, list[str]]:
    """One customer and `count` prepaid accounts of `currency` (the product without
    overdraft), each loaded with `load`, via the API; returns the customer and the accounts."""
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
    )
    products = expect(*call(conn, api_key, "GET", "/TX/v2/products/accounts"), 200)
    product = next(
        p
        for p in products["data"]
        if p["currency"] == currency and p["kind"] == "prepaid" and not p["allowsOverdraft"]
    )
    account_ids = []
    for _ in range(count):
        body = {"customerId": customer["customerId"], "productRid": product["rid"]}
        account = expect(*call(conn, api_key, "POST", "/TX/v2/accounts", body), 201)
        credit = {"direction": "credit", "amount": load, "currency": currency}
        path = f"/TX/v2/accounts/{account['accountId']}/adjustments"
        expect(*call(conn, api_key, "POST", path, credit), 201)
        account_ids.append(account["accountId"])
    conn.close()
    return customer["customerId"], account_ids
