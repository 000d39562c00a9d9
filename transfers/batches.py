"""Transfer batches: many transfers in one operation, applied in request order
(docs/transfer-batches.md).

Every item is an ordinary transfer (`transfer_new` builds its rows), so it passes the same
checks and writes the same rows. Runs of account-to-account items post in one round trip each
(`accounts.posting.post_many`: the batch form of the posting function); an item through a card
posts alone through `transfer_create` (limits, monitoring). What the batch adds is the order of
the locks (every card, then every account of the whole batch, each by id, once: two batches over
the same accounts queue instead of deadlocking) and what a failed item means: in an `atomic`
batch the whole operation is refused (422 `batch_item_failed`, naming the item); in an
`independent` batch the failed item changes nothing (a card item runs as a part of the
operation, `core.operations.part`) and the others post.
"""

from django.db import IntegrityError, transaction

from accounts.locks import lock_accounts
from accounts.posting import Movement, post_many
from accounts.rules import check_currency
from core.actors import Actor
from core.exceptions import BatchItemFailed, DuplicateReference, TXError
from core.metrics import TRANSFER_BATCH, count_on_commit
from core.operations import part
from institutions.models import Institution

from .endpoints import Resolved, endpoint_pairs_resolve
from .locks import lock_batch_queue, lock_cards
from .models import TransferBatch
from .services import (
    check_two_accounts,
    constraint_of,
    references_taken,
    transfer_create_for,
    transfer_new,
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
        # Written by `_Run` (`write_ahead` or `finish`): its items' foreign keys to it are
        # checked when the transaction commits.
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
        run.finish()
    return batch


class _Run:
    """The items applied in order. Account-to-account items are gathered into runs posted by
    one `post_many` call each (the items of a run apply in order on running balances); an item
    through a card first flushes the run before it, then posts alone through `transfer_create`
    (limits, monitoring). An item refused before posting (an endpoint that does not resolve, one
    account twice, a reference taken) fails where it stands, after what came before it.

    The batch's row is written once where it can be: before the queue, with the results it
    will have if every waiting item posts (`write_ahead`). The queue's holder then makes one
    round trip fewer while the institution's other batches wait for it (bench/README.md); a
    refusal in an atomic batch rolls the row back with everything else, and an independent
    batch with a refusal writes its actual results at the end (`finish`)."""

    def __init__(self, institution, batch, items, actor):
        self.institution, self.batch, self.items, self.actor = institution, batch, items, actor
        self.atomic = batch.mode == TransferBatch.Mode.ATOMIC
        self.results: list[dict | None] = [None] * len(items)
        references = [item["reference"] for item in items if item.get("reference")]
        self.taken = references_taken(institution, references) if references else set()
        self.waiting: list[tuple[int, list[Resolved]]] = []  # the run not yet posted
        self.queued = False

    def write_ahead(self, waiting: list, news: list) -> None:
        """Write the batch's row before the queue, when every item is decided or in the run
        about to post (`waiting`, its rows `news`): with the results it has if all of the run
        posts."""
        if self.queued or not self.batch._state.adding:  # queued, or the row written already
            return
        results = list(self.results)
        for (index, _), new in zip(waiting, news, strict=True):
            results[index] = _posted_result(index, new.transfer)
        if None in results:
            return
        self._insert(results)

    def finish(self) -> None:
        """The batch's row with its actual results: written now, or corrected when a refusal
        made them differ from what `write_ahead` wrote."""
        if self.batch._state.adding:
            self._insert(self.results)
        elif self.batch.results != self.results:  # what `write_ahead` wrote
            self.batch.results = list(self.results)
            self.batch.save(update_fields=["results"])

    def _insert(self, results: list[dict]) -> None:
        self.batch.results = list(results)
        self.batch.save(force_insert=True)

    def queue(self) -> None:
        """Wait for the institution's earlier batches, once, right before the first lock
        (`transfers.locks.lock_batch_queue`): the rows are built and the items checked outside
        the queue."""
        if not self.queued:
            lock_batch_queue(self.institution)
            self.queued = True

    def add(self, index: int, resolved) -> None:
        item = self.items[index]
        reference = item.get("reference")
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
                # A single transfer's order: the currency (it never changes: no lock needed),
                # the reference, then status and funds on the locked accounts (`post_many`). An
                # item through a card is checked by `transfer_create` itself, in the same order.
                check_currency(source.account, item["currency"])
                check_currency(destination.account, item["currency"])
                if reference is not None and reference in self.taken:
                    raise DuplicateReference(details={"reference": reference})
        except TXError as error:
            return self._refused(index, error)
        if by_account:
            self.waiting.append((index, resolved))
            return None
        self.flush()
        self.queue()
        try:
            if self.atomic:
                transfer = self._post_one(item, resolved)
            else:
                with part():
                    transfer = self._post_one(item, resolved)
        except TXError as error:
            return self._refused(index, error)
        self._posted(index, transfer)
        return None

    def flush(self) -> None:
        waiting, self.waiting = self.waiting, []
        if not waiting:
            return
        news = [
            transfer_new(
                institution=self.institution,
                source=source.account,
                destination=destination.account,
                amount=self.items[index]["amount"],
                currency=self.items[index]["currency"],
                description=self.items[index].get("description", ""),
                reference=self.items[index].get("reference"),
                batch=self.batch,
                actor=self.actor,
                metadata=self.items[index].get("metadata"),
            )
            for index, (source, destination) in waiting
        ]
        movements = [
            Movement(
                source_id=new.transfer.source_account_id,
                destination_id=new.transfer.destination_account_id,
                amount=new.transfer.amount,
                currency=new.transfer.currency,
                journal=new.journal,
                row=new.transfer,
                lines=new.lines,
                event=new.event,
            )
            for new in news
        ]
        self.write_ahead(waiting, news)
        self.queue()
        try:
            # A savepoint: a reference that a concurrent request took after it was checked
            # undoes this call only; the run is checked again and posted without that item.
            with transaction.atomic():
                refused = post_many(
                    institution_id=self.institution.pk, atomic=self.atomic, movements=movements
                )
        except IntegrityError as error:
            if constraint_of(error) != "transfer_reference_unique":
                raise
            references = [self.items[index].get("reference") for index, _ in waiting]
            self.taken |= references_taken(self.institution, [r for r in references if r])
            for index, resolved in waiting:
                self.add(index, resolved)
            self.flush()
            return
        count_on_commit(TRANSFER_BATCH, len(news) - len(refused))
        for position, ((index, _), new) in enumerate(zip(waiting, news, strict=True)):
            if position in refused:
                self._refused(index, refused[position])
            else:
                self._posted(index, new.transfer)

    def _post_one(self, item: dict, resolved: list[Resolved]):
        return transfer_create_for(
            item, resolved, institution=self.institution, actor=self.actor, batch=self.batch
        )

    def _posted(self, index: int, transfer) -> None:
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


def _posted_result(index: int, transfer) -> dict:
    return {
        "index": index,
        "status": POSTED,
        "transferId": transfer.pk,
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
