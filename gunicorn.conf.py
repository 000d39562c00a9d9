"""gunicorn's configuration for TX in production (gunicorn reads ./gunicorn.conf.py by itself):
`gunicorn config.wsgi`. Every setting comes from the environment, with a production default;
a command-line flag still wins over this file (bench/transfers.py passes its own).

Metrics (docs/operations.md, "Metrics"): the workers are processes of their own, so
prometheus_client runs in multiprocess mode, each worker writing its values to files of
PROMETHEUS_MULTIPROC_DIR that `/metrics` sums. When the environment names none, this file
makes one as gunicorn reads it: before anything imports prometheus_client, which picks its mode
when it is first imported (a worker that inherited the single-process mode would count only its
own requests), and before the application is loaded, also with --preload.
"""

import glob
import multiprocessing
import os
import shutil
import tempfile

_made_metrics_dir = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _made_metrics_dir = tempfile.mkdtemp(prefix="tx-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _made_metrics_dir


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


# Loopback unless told otherwise: nothing is reachable from another machine by accident. Behind
# a load balancer on other machines, GUNICORN_BIND=0.0.0.0:8000 (or the node's address).
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
# gunicorn's advice for a process that waits on its database as much as it computes: two per
# core, plus one. Each process holds up to `threads` database connections at once (more with
# read replicas): workers x threads x app nodes must fit PostgreSQL's max_connections.
workers = _env_int("GUNICORN_WORKERS", 2 * multiprocessing.cpu_count() + 1)
# Two threads per worker (gthread): a worker keeps its CPU busy while a request waits for
# PostgreSQL, without the memory of another process (bench/README.md measured 4 x 2).
threads = _env_int("GUNICORN_THREADS", 2)
# A worker silent this long is killed and replaced. Well above the slowest legitimate request:
# a 1,000-item batch, an Idempotency-Key wait (IDEMPOTENCY_WAIT_SECONDS) or a pool wait
# (DATABASE_POOL_TIMEOUT).
timeout = _env_int("GUNICORN_TIMEOUT", 30)
# On SIGTERM (a deploy, a scale-down) the requests in flight get this long to finish: a
# transfer is never cut between its answer and its client.
graceful_timeout = _env_int("GUNICORN_GRACEFUL_TIMEOUT", 30)
# Seconds an idle keep-alive connection stays open. Longer than the load balancer's own idle
# timeout for its connections to us, or it may send a request on a connection we are closing.
keepalive = _env_int("GUNICORN_KEEPALIVE", 75)
# No access log of gunicorn's: TX logs one JSON line per request itself (tx.access, with its
# tranId). Errors of gunicorn itself go to stderr.
accesslog = None
errorlog = "-"


def on_starting(server):
    """Before the first worker: the metrics directory exists, and the files of a previous run's
    processes go (their counts are history; Prometheus takes the drop for a restart of the
    counters). A job worker that shares the directory (docs/operations.md) restarts with
    gunicorn."""
    path = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(path, exist_ok=True)
    for stale in glob.glob(os.path.join(path, "*.db")):
        os.remove(stale)


def post_worker_init(worker):
    """The worker has loaded the application: what it loaded lives as long as the process, out
    of the garbage collector's way (`config.wsgi.freeze_loaded`)."""
    from config.wsgi import freeze_loaded

    freeze_loaded()


def child_exit(server, worker):
    """A worker has exited: its live gauges (its database pool) stop counting; its counters and
    histograms stay in the sums."""
    from prometheus_client import multiprocess  # here: after the directory is in the environment

    multiprocess.mark_process_dead(worker.pid)


def worker_exit(server, worker):
    """A worker is ending gracefully (a restart, a deploy, SIGTERM): the rate limits' requests it
    counted and has not written yet are written now, so that a restart forgives none of them
    (api/ratelimit.py, `LocalCounters`). gunicorn also calls this in the arbiter for a worker
    already gone, which has nothing of its own to write. A worker killed outright skips it: the
    bound of docs/api-contract.md, "Rate limits", holds then."""
    if os.getpid() != worker.pid:
        return
    from api import ratelimit

    ratelimit.flush()


def on_exit(server):
    if _made_metrics_dir is not None:
        shutil.rmtree(_made_metrics_dir, ignore_errors=True)
