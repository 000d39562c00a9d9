"""The folders the bank and TX exchange files through (docs/payments.md, "The connector"), what
a sponsor bank's SFTP gives: for each institution and rail family (`ach`: NACHA files; `sepa`:
ISO 20022 documents), an `outbox` TX writes its files into and an `inbox` the bank writes its
files into, under RAILS_DIR (`<RAILS_DIR>/<institution id>/ach/outbox`, `.../sepa/inbox`).

- `deliver`: a written file's bytes into the outbox (a temporary name, then renamed: the bank
  never reads half a file), then its orders (or a camt.056's recall) are `sent`. Delivering
  again writes the same bytes under the same name: a crash between the two steps leaves
  nothing wrong.
- `collect`: every file in the inbox read (`inbound_files.rail_file_receive`: stored by its
  bytes, applied once), then moved into `inbox/read/`: a file read again (the move lost in a
  crash) is found by its bytes and not applied twice. Names are the bank's, never trusted as
  paths: only regular files directly in the inbox are read, and nothing is followed.
  A statement of the bank's account in the inbox (camt.053/052, BAI2, MT940) is read by
  whoever registered as its reader (`register_statement_reader`: reconciliation, a layer
  above, docs/reconciliation.md), not as a rail file; one that is not valid is kept as a
  `refused` rail file with why, as a rail file is.
"""

import logging
import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .locks import lock_payment_orders
from .models import PaymentOrder, Rail, RailFile
from .services.inbound_files import MAX_FILE_BYTES, rail_file_receive, rail_file_refuse
from .services.orders import emit_order
from .services.recalls import recalls_delivered

FAMILY = {
    Rail.ACH: "ach",
    Rail.ACH_SAME_DAY: "ach",
    Rail.SEPA_CT: "sepa",
    Rail.SEPA_INST: "sepa",
    Rail.SEPA_DD: "sepa",
}
# The rail a file read from a family's inbox is recorded under.
INBOX_RAIL = {"ach": Rail.ACH, "sepa": Rail.SEPA_CT}
logger = logging.getLogger("tx.rails")
# Who reads the bank's statements found in an inbox (`register_statement_reader`).
_statement_readers: list[Callable[..., str | None]] = []


def register_statement_reader(reader: Callable[..., str | None]) -> None:
    """`reader(institution=, name=, content=)`: None when the file is not a statement (then it
    is a rail file), "" when it read it, else why it refused it (the file is kept refused)."""
    if reader not in _statement_readers:
        _statement_readers.append(reader)


def _as_statement(institution, family: str, name: str, content: bytes) -> bool:
    """Whether a registered reader took the file as a statement (read, or kept refused)."""
    for reader in _statement_readers:
        refused = reader(institution=institution, name=name, content=content)
        if refused is None:
            continue
        if refused:
            rail_file_refuse(
                institution=institution,
                rail=INBOX_RAIL[family],
                name=name,
                content=content,
                reason=f"a bank statement, not valid: {refused}",
            )
        return True
    return False


def folder(institution_id: str, family: str, which: str) -> Path:
    path = Path(settings.RAILS_DIR) / institution_id / family / which
    path.mkdir(parents=True, exist_ok=True)
    return path


def deliver(rail_file: RailFile) -> RailFile:
    """Write a file TX made into its outbox and mark its orders `sent` (module docstring)."""
    outbox = folder(rail_file.institution_id, FAMILY[rail_file.rail], "outbox")
    target = outbox / rail_file.name
    partial = outbox / f".{rail_file.name}.partial"
    content = RailFile.objects.values_list("content", flat=True).get(pk=rail_file.pk)
    partial.write_bytes(bytes(content))
    os.replace(partial, target)
    with transaction.atomic():
        now = timezone.now()
        orders = lock_payment_orders(
            PaymentOrder.objects.filter(file=rail_file, status=PaymentOrder.Status.SCHEDULED)
        )
        for order in orders:
            order.status = PaymentOrder.Status.SENT
            order.sent_at = order.updated_at = now
            order.save(update_fields=["status", "sent_at", "updated_at"])
            emit_order(order, "payment_order.sent", file_id=rail_file.pk)
        recalls_delivered(rail_file, now)
        RailFile.objects.filter(pk=rail_file.pk, delivered_at__isnull=True).update(
            delivered_at=now, status=RailFile.Status.DELIVERED, updated_at=now
        )
    rail_file.refresh_from_db(fields=["delivered_at", "status", "updated_at"])
    return rail_file


def deliver_pending() -> int:
    """Deliver every written file not delivered yet (after a crash, or the cut-off's own
    delivery failing); return how many."""
    count = 0
    for rail_file in RailFile.objects.filter(
        direction=RailFile.Direction.OUTBOUND, delivered_at__isnull=True
    ).defer("content"):
        deliver(rail_file)
        count += 1
    return count


def collect(institution, family: str = "ach", now=None) -> list[RailFile]:
    """Read every file the bank put in the institution's inbox (module docstring)."""
    inbox = folder(institution.pk, family, "inbox")
    read = inbox / "read"
    read.mkdir(exist_ok=True)
    received = []
    for entry in sorted(os.scandir(inbox), key=lambda item: item.name):
        if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
            continue
        if entry.stat(follow_symlinks=False).st_size > MAX_FILE_BYTES:
            # Never read into memory: set aside for the operators, with a log line.
            logger.error("rail file too large, set aside", extra={"file": entry.name})
            refused = inbox / "refused"
            refused.mkdir(exist_ok=True)
            os.replace(entry.path, refused / entry.name)
            continue
        with open(entry.path, "rb") as handle:
            content = handle.read()
        if _as_statement(institution, family, entry.name, content):
            os.replace(entry.path, read / entry.name)
            continue
        received.append(
            rail_file_receive(
                institution=institution,
                rail=INBOX_RAIL[family],
                name=entry.name,
                content=content,
                now=now,
            )
        )
        os.replace(entry.path, read / entry.name)
    return received
