"""The statement PDF's cost per line (docs/statements.md, "PDF"): time and memory of
`transactions.statement_pdf.statement_pdf` alone, in this process, for months of N lines.

    .venv/bin/python bench/statement_pdf.py [--lines 250 500 1000 2000 4000] [--rounds 3]

No database: the statement and its lines are made in memory, with descriptions as long as a
card purchase's or a transfer's. Per size: the best of `--rounds` wall times (no tracing), then
one run under tracemalloc for the peak of Python memory it allocates, and the PDF's size. The
line limit (`STATEMENT_PDF_MAX_LINES`) is chosen from these figures.
"""

import argparse
import gc
import os
import sys
import time
import tracemalloc
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

TYPES = ["Goods", "Cash", "CashDec", "CashInc", "Return"]
DESCRIPTIONS = [
    "Card purchase Bench Shop 42 Berlin",
    "ATM withdrawal",
    "Transfer out: rent March, flat 3 left, Kastanienallee 12",
    "Transfer in",
    "Refund",
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000])
    parser.add_argument("--rounds", type=int, default=3, help="timed runs per size (default 3)")
    return parser.parse_args()


def statement_of(count: int):
    from accounts.statement_lines.periods import Period, Statement

    period = Period(first=date(2026, 1, 1), last=date(2026, 1, 31), time_zone="Europe/Berlin")
    account = SimpleNamespace(
        pk="acc_bench",
        currency="EUR",
        account_number="DE89370400440532013000",
        institution=SimpleNamespace(name="TX Bench Bank"),
    )
    by_type = {kind: {"credits": 0, "debits": 0, "count": 0} for kind in TYPES}
    return Statement(
        account=account,
        period=period,
        opening_balance=100_000,
        closing_balance=100_000,
        credits=0,
        debits=0,
        by_type=by_type,
        line_count=count,
    )


def lines_of(count: int) -> list:
    start = datetime(2025, 12, 31, 23, 0, tzinfo=UTC)
    step = timedelta(days=31) / max(count, 1)
    return [
        SimpleNamespace(
            created_at=start + i * step,
            type=TYPES[i % len(TYPES)],
            status="posted",
            description=DESCRIPTIONS[i % len(DESCRIPTIONS)],
            is_credit=TYPES[i % len(TYPES)] in ("CashInc", "Return"),
            amount=1 + (i * 7919) % 100_000,
            currency="EUR",
        )
        for i in range(count)
    ]


def main():
    args = parse_args()
    import django

    django.setup()
    from transactions.statement_pdf import statement_pdf

    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"Machine: {os.cpu_count()} cores, load average {load} (other work skews results)")
    import fpdf

    print(f"fpdf2 {fpdf.__version__}; best of {args.rounds} runs, then one under tracemalloc")
    columns = ("seconds", "ms/line", "peak MiB", "KiB/line")
    print(f"{'lines':>6}  " + "  ".join(f"{name:>9}" for name in columns) + "  PDF KiB")
    for count in args.lines:
        statement, lines = statement_of(count), lines_of(count)
        best = float("inf")
        for _ in range(args.rounds):
            gc.collect()
            started = time.perf_counter()
            content = statement_pdf(statement, lines)
            best = min(best, time.perf_counter() - started)
        gc.collect()
        tracemalloc.start()
        statement_pdf(statement, lines)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"{count:>6}  {best:9.2f}  {best * 1000 / count:9.2f}  {peak / 2**20:9.1f}  "
            f"{peak / 1024 / count:9.1f}  {len(content) / 1024:7.0f}"
        )


if __name__ == "__main__":
    main()
