"""Write and parse a NACHA file of N entries (100,000 by default): the time of each step and the
memory it holds (issue 49 item 5; bench/README.md, "nacha.py").

Run by hand, never by the tests:

    .venv/bin/python bench/nacha.py                 # 100,000 entries in 100 batches
    .venv/bin/python bench/nacha.py --entries 500000 --batches 1 --addenda

Steps, on a file in a temporary folder, each timed without tracing, then run again under
tracemalloc for its peak:
- write: `write_to` the file, over batches whose entries are made as they are written (a
  generator), so what is measured is the writer's memory, not a list of the caller's entries;
- check: `parse` the file, the whole-file pass through the rules (running totals only);
- check + walk: `parse`, then `ParsedFile.entries()`, every entry read again from the file and
  handed out one at a time.
"""

import argparse
import datetime
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from payments.nacha.addenda import PaymentAddenda  # noqa: E402
from payments.nacha.batch_header import BatchHeader  # noqa: E402
from payments.nacha.entry import EntryDetail  # noqa: E402
from payments.nacha.file import Batch, Entry, parse, trace_number, write_to  # noqa: E402
from payments.nacha.file_header import FileHeader  # noqa: E402

ODFI = "09100001"
ROUTING_NUMBERS = ["021000021", "121000248", "026009593", "011000015", "031300012"]


def batches(entries: int, count: int, addenda: bool):
    per_batch = -(-entries // count)
    sequence = 0
    for number in range(1, count + 1):
        size = min(per_batch, entries - sequence)
        if size <= 0:
            return
        header = BatchHeader(
            service_class_code=200,
            company_name="TX BENCH",
            company_identification="1234567890",
            standard_entry_class_code="PPD",
            company_entry_description="PAYROLL",
            effective_entry_date=datetime.date(2026, 3, 6),
            odfi_identification=ODFI,
            batch_number=number,
        )

        def made(first=sequence, size=size):
            for index in range(first, first + size):
                trace = trace_number(ODFI, index + 1)
                yield Entry(
                    EntryDetail(
                        transaction_code=22 if index % 3 else 27,
                        routing_number=ROUTING_NUMBERS[index % len(ROUTING_NUMBERS)],
                        dfi_account_number=f"{100000 + index}",
                        amount=100 + index % 100_000,
                        identification_number=f"EMP{index}",
                        receiver_name=f"RECEIVER {index}",
                        addenda_record_indicator=1 if addenda else 0,
                        trace_number=trace,
                    ),
                    (
                        PaymentAddenda(
                            payment_related_information=f"INVOICE {index}",
                            entry_detail_sequence_number=trace[-7:],
                        ),
                    )
                    if addenda
                    else (),
                )

        sequence += size
        yield Batch(header, made())


def header() -> FileHeader:
    return FileHeader(
        immediate_destination="091000019",
        immediate_origin="1234567890",
        file_creation_date=datetime.date(2026, 3, 5),
        file_creation_time=datetime.time(16, 45),
    )


def timed(step):
    start = time.perf_counter()
    result = step()
    return result, time.perf_counter() - start


def traced(step) -> int:
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--addenda", action="store_true", help="an addenda 05 on every entry")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.ach"

        def write():
            with path.open("wb") as stream:
                return write_to(
                    stream, header(), batches(options.entries, options.batches, options.addenda)
                )

        def check():
            with path.open("rb") as stream:
                return parse(stream).record_count

        def walk():
            with path.open("rb") as stream:
                return sum(1 for _ in parse(stream).entries())

        records, write_seconds = timed(write)
        _, check_seconds = timed(check)
        walked, walk_seconds = timed(walk)
        if walked != options.entries:
            raise SystemExit(f"walked {walked} entries, wrote {options.entries}")
        size = path.stat().st_size
        write_peak, check_peak, walk_peak = traced(write), traced(check), traced(walk)

    print(
        f"{options.entries:,} entries in {options.batches} batches"
        f"{' with an addenda 05 each' if options.addenda else ''}: {records:,} records, "
        f"{size / 1e6:.1f} MB"
    )
    print(f"write        {write_seconds:6.2f} s   peak {write_peak / 1e6:6.2f} MB (tracemalloc)")
    print(f"check        {check_seconds:6.2f} s   peak {check_peak / 1e6:6.2f} MB")
    print(f"check + walk {walk_seconds:6.2f} s   peak {walk_peak / 1e6:6.2f} MB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
