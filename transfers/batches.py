"""Transfer batches: many transfers in one operation, applied in request order
(docs/transfer-batches.md).

Every item is an ordinary transfer posted at once (`services.posted_rows` builds its rows), so
it passes the same checks and writes the same rows. Runs of account-to-account items post in one
round trip each (`accounts.posting.post_many`: the batch form of the posting function); an item
through a card posts alone through `services.posted_create` (limits, monitoring). What the batch
adds is the order of the locks (every card, then every account of the whole batch, each by id,
once: two batches over the same accounts queue instead of deadlocking; transfers.locks) and
what a failed item means: in an `atomic` batch the whole operation is refused (422
`batch_item_failed`, naming the item); in an `independent` batch the failed item changes
nothing (a card item runs as a part of the operation, `core.operations.part`) and the others
post.

The steps: `transfer_batch_create` resolves every item's ends, takes the locks up front when
the batch posts in more than one call, then applies the items in order (`_Run.add`): each is
refused where it stands, joins the waiting run of account items, or posts alone; the run posts
when an item needs what it decides (`_Run.flush`). `_BatchRow` writes the batch's row.
"""

from django.db import IntegrityError, transaction

from accounts.locks import lock_accounts
from accounts.posting import Movement, post_many
from core.actors import Actor
from core.exceptions import BatchItemFailed, DuplicateReference, TXError
from core.metrics import TRANSFER_BATCH, count_on_commit
from core.operations import part
from core.rows import constraint_of
from institutions.models import Institution

from .endpoints import Resolved, endpoint_pairs_resolve
from .locks import lock_batch_queue, lock_cards
from .models import Transfer, TransferBatch
from .services import (
    NewTransfer,
    Order,
    check_currencies,
    check_two_accounts,
    order_fields,
    posted_create,
    posted_rows,
    references_taken,
)

MAX_ITEMS = 1000

POSTED = "posted"
FAILED = "failed"


def transfer_batch_create(
    *, institution: Institution, mode: str, items: list[dict], actor: Actor
) -> TransferBatch:
    """Post `items` (each a `POST /transfers` body as parsed: `source`, `destination`,
    `amount`, `currency`, optional `description` and `reference`) in order, as one batch of
    `mode`; return the batch with its `results`."""
    if not 1 <= len(items) <= MAX_ITEMS:
        raise ValueError(f"a batch has 1 to {MAX_ITEMS} items")
    with transaction.atomic(savepoint=False):
        # Written by `_BatchRow` (ahead of the queue, or at the end): its items' foreign keys to
        # it are checked when the transaction commits.
        batch = TransferBatch(
            institution=institution, mode=mode, results=[], **actor.stamp("created_by")
        )
        ends = endpoint_pairs_resolve(
            institution=institution,
            pairs=[[item["source"], item["destination"]] for item in items],
            actor=actor,
        )
        run = _Run(institution, batch, items, actor)
        if _posts_more_than_once(items, ends):
            run.queue()
            _lock_all(ends)
        for index, resolved in enumerate(ends):
            run.add(index, resolved)
        run.flush()
        run.row.finish(run.results)
    return batch


class _BatchRow:
    """The batch's row, written once where it can be: before the institution's queue, with the
    results it will have if every waiting item posts (`write_ahead`). The queue's holder then
    makes one round trip fewer while the institution's other batches wait for it
    (bench/README.md); a refusal in an atomic batch rolls the row back with everything else,
    and an independent batch with a refusal corrects its results at the end (`finish`, one
    UPDATE). A batch that queued before its first run (`_posts_more_than_once`) writes it at
    the end."""

    def __init__(self, batch: TransferBatch):
        self.batch = batch

    def write_ahead(self, results: list[dict | None]) -> None:
        """Written now with `results`, if every item is decided in them and it is not yet."""
        if self.batch._state.adding and None not in results:
            self._insert(results)

    def finish(self, results: list[dict]) -> None:
        """Written with the actual `results`, or corrected when a refusal made them differ from
        what `write_ahead` wrote."""
        if self.batch._state.adding:
            self._insert(results)
        elif self.batch.results != results:
            self.batch.results = list(results)
            self.batch.save(update_fields=["results"])

    def _insert(self, results: list[dict]) -> None:
        self.batch.results = list(results)
        self.batch.save(force_insert=True)


class _Run:
    """The items applied in order. Account-to-account items gather in the waiting run, posted
    by one `post_many` call (its items apply in order on running balances); an item through a
    card first flushes the run before it, then posts alone. An item refused before posting (an
    endpoint that does not resolve, one account twice, a reference taken) fails where it stands,
    after what came before it."""

    def __init__(self, institution: Institution, batch: TransferBatch, items, actor: Actor):
        self.institution, self.batch, self.items, self.actor = institution, batch, items, actor
        self.atomic = batch.mode == TransferBatch.Mode.ATOMIC
        self.row = _BatchRow(batch)
        self.results: list[dict | None] = [None] * len(items)
        references = [item["reference"] for item in items if item.get("reference")]
        self.taken = references_taken(institution, references) if references else set()
        self.waiting: list[tuple[int, list[Resolved]]] = []  # the run not yet posted
        self.queued = False

    def queue(self) -> None:
        """Wait for the institution's earlier batches, once, right before the first lock
        (`transfers.locks.lock_batch_queue`): the rows are built and the items checked outside
        the queue."""
        if not self.queued:
            lock_batch_queue(self.institution)
            self.queued = True

    def add(self, index: int, resolved) -> None:
        """Apply item `index`: refused where it stands, added to the waiting run (an account
        item) or posted alone (a card item)."""
        reference = self.items[index].get("reference")
        if reference is not None and any(
            self.items[i].get("reference") == reference for i, _ in self.waiting
        ):
            self.flush()  # whether the earlier item took the reference decides this one
        if isinstance(resolved, TXError):
            return self._refused(index, resolved)
        source, destination = resolved
        by_account = source.card is None and destination.card is None
        try:
            check_two_accounts(source.account, destination.account)
            if by_account:
                self._check_account_item(index, resolved)
        except TXError as error:
            return self._refused(index, error)
        if by_account:
            self.waiting.append((index, resolved))
        else:
            self._post_alone(index, resolved)
        return None

    def _check_account_item(self, index: int, resolved: list[Resolved]) -> None:
        """A single transfer's order: the currency (it never changes: no lock needed), the
        reference, then status and funds on the locked accounts (`post_many`). An item through
        a card is checked by `posted_create` itself, in the same order."""
        item = self.items[index]
        source, destination = resolved
        check_currencies(source.account, destination.account, item["currency"])
        reference = item.get("reference")
        if reference is not None and reference in self.taken:
            raise DuplicateReference(details={"reference": reference})

    def _post_alone(self, index: int, resolved: list[Resolved]) -> None:
        """A card item: the run before it posted first, then it alone (limits, monitoring), as
        a part of the operation that may be refused on its own in an independent batch."""
        self.flush()
        self.queue()
        order = self._order(index, resolved)
        try:
            if self.atomic:
                transfer = posted_create(order, batch=self.batch)
            else:
                with part():
                    transfer = posted_create(order, batch=self.batch)
        except TXError as error:
            return self._refused(index, error)
        count_on_commit(TRANSFER_BATCH)
        self._posted(index, transfer)
        return None

    def flush(self) -> None:
        """Post the waiting run in one `post_many` call: its rows built and the batch's row
        written ahead (when it can be) before the queue, then each item posted or refused."""
        waiting, self.waiting = self.waiting, []
        if not waiting:
            return
        news = [
            posted_rows(self._order(index, resolved), batch=self.batch)
            for index, resolved in waiting
        ]
        if not self.queued:
            self.row.write_ahead(self._results_if_posted(waiting, news))
        self.queue()
        try:
            # A savepoint: a reference that a concurrent request took after it was checked
            # undoes this call only; the run is checked again and posted without that item.
            with transaction.atomic():
                refused = post_many(
                    institution_id=self.institution.pk,
                    atomic=self.atomic,
                    movements=[_movement(new) for new in news],
                )
        except IntegrityError as error:
            if constraint_of(error) != "transfer_reference_unique":
                raise
            self._run_again(waiting)
            return
        count_on_commit(TRANSFER_BATCH, len(news) - len(refused))
        for position, ((index, _), new) in enumerate(zip(waiting, news, strict=True)):
            if position in refused:
                self._refused(index, refused[position])
            else:
                self._posted(index, new.transfer)

    def _run_again(self, waiting: list[tuple[int, list[Resolved]]]) -> None:
        """A run whose reference another request took meanwhile: the taken references read
        again, its items applied again (the one whose reference was taken now fails on it), the
        rest posted."""
        references = [self.items[index].get("reference") for index, _ in waiting]
        self.taken |= references_taken(self.institution, [r for r in references if r])
        for index, resolved in waiting:
            self.add(index, resolved)
        self.flush()

    def _order(self, index: int, resolved: list[Resolved]) -> Order:
        return Order(
            **order_fields(self.items[index], resolved),
            institution=self.institution,
            actor=self.actor,
        )

    def _results_if_posted(self, waiting, news: list[NewTransfer]) -> list[dict | None]:
        """The results if every item of the waiting run posts."""
        results = list(self.results)
        for (index, _), new in zip(waiting, news, strict=True):
            results[index] = _posted_result(index, new.transfer)
        return results

    def _posted(self, index: int, transfer: Transfer) -> None:
        if transfer.reference is not None:
            self.taken.add(transfer.reference)
        self.results[index] = _posted_result(index, transfer)

    def _refused(self, index: int, error: TXError) -> None:
        if self.atomic:
            self.flush()  # an earlier item of the waiting run may fail first
            raise BatchItemFailed(
                f"Item {index} failed ({error.code}): nothing was posted.",
                details={
                    "index": index,
                    "code": error.code,
                    "message": error.message,
                    "details": error.details,
                },
            ) from None
        self.results[index] = {
            "index": index,
            "status": FAILED,
            "code": error.code,
            "message": error.message,
            "reference": self.items[index].get("reference"),
        }


def _movement(new: NewTransfer) -> Movement:
    return Movement(
        source_id=new.transfer.source_account_id,
        destination_id=new.transfer.destination_account_id,
        amount=new.transfer.amount,
        currency=new.transfer.currency,
        journal=new.journal,
        row=new.transfer,
        lines=new.lines,
        event=new.event,
    )


def _posted_result(index: int, transfer: Transfer) -> dict:
    return {
        "index": index,
        "status": POSTED,
        "transfer_id": transfer.pk,
        "reference": transfer.reference,
    }


def _posts_more_than_once(items: list[dict], ends: list) -> bool:
    """Whether the batch posts in more than one call: an item through a card posts alone, and
    a reference named twice splits the run. A batch posted in one `post_many` call takes its
    locks there (every account, by id, once), after its rows are built; any other takes them
    all up front (`_lock_all`), so no batch ever locks in two rounds."""
    if any(end.card is not None for pair in ends if not isinstance(pair, TXError) for end in pair):
        return True
    references = [item["reference"] for item in items if item.get("reference")]
    return len(references) != len(set(references))


def _lock_all(ends: list) -> None:
    """Every card of the batch, then every account, each by id: a single transfer's order
    (transfers.locks), taken once for the whole batch."""
    resolved = [end for pair in ends if not isinstance(pair, TXError) for end in pair]
    lock_cards(end.card.pk for end in resolved if end.card is not None)
    lock_accounts(end.account.pk for end in resolved)
