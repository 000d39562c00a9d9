"""The bank's statements (docs/reconciliation.md): a header per file, its lines, its bytes."""

from django.db import models
from django.utils import timezone

from accounts.models import Account, Entry, Journal
from core.ids import new_id
from core.metadata import MetadataField
from core.models import Timestamped
from core.money import money
from institutions.models import Institution


def _statement_id():
    return new_id("bst")


def _line_id():
    return new_id("bsl")


class BankStatement(models.Model):
    """One statement file of the bank, stored raw by its bytes' SHA-256 (the same bytes are one
    statement: a unique constraint) and read into lines. `account` is the internal account of
    the institution it mirrors (the rail settlement account of its currency)."""

    class Format(models.TextChoices):
        CAMT_053 = "camt.053", "camt.053 (end of day)"
        CAMT_052 = "camt.052", "camt.052 (intraday)"
        BAI2 = "bai2", "BAI2"
        MT940 = "mt940", "MT940"

    id = models.CharField(primary_key=True, max_length=40, default=_statement_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    format = models.CharField(max_length=8, choices=Format.choices)
    name = models.CharField(max_length=200)
    sha256 = models.CharField(max_length=64)
    content = models.BinaryField()
    bank_statement_id = models.CharField(max_length=140, blank=True)
    sequence = models.CharField(max_length=40, blank=True)
    account_last4 = models.CharField(max_length=4, blank=True)
    currency = models.CharField(max_length=3)
    opening_balance = models.BigIntegerField(null=True, blank=True)
    closing_balance = models.BigIntegerField(null=True, blank=True)
    period_start = models.DateField(null=True, blank=True)
    period_end = models.DateField(null=True, blank=True)
    line_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "bank statement"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="bank_stmt_inst_idx")]
        constraints = [
            models.UniqueConstraint(fields=["institution", "sha256"], name="bank_stmt_bytes_once"),
        ]

    def __str__(self):
        return f"{self.format} {self.bank_statement_id} ({self.currency})"


class BankStatementLine(models.Model):
    """One booking of a statement, in the order of the file (`position`, from 1)."""

    class Direction(models.TextChoices):
        CREDIT = "credit"
        DEBIT = "debit"

    id = models.CharField(primary_key=True, max_length=40, default=_line_id, editable=False)
    statement = models.ForeignKey(BankStatement, on_delete=models.PROTECT, related_name="lines")
    position = models.PositiveIntegerField()
    booking_date = models.DateField(null=True, blank=True)
    value_date = models.DateField(null=True, blank=True)
    amount = models.BigIntegerField()
    direction = models.CharField(max_length=6, choices=Direction.choices)
    currency = models.CharField(max_length=3)
    bank_reference = models.CharField(max_length=140, blank=True)
    end_to_end_id = models.CharField(max_length=140, blank=True)
    trace_number = models.CharField(max_length=40, blank=True)
    remittance = models.CharField(max_length=500, blank=True)
    counterparty_name = models.CharField(max_length=140, blank=True)
    counterparty_account_last4 = models.CharField(max_length=4, blank=True)
    batch_count = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        verbose_name = "bank statement line"
        ordering = ["statement", "position"]
        constraints = [
            models.UniqueConstraint(fields=["statement", "position"], name="bank_stmt_line_once"),
            models.CheckConstraint(condition=models.Q(amount__gte=0), name="bank_stmt_line_amount"),
        ]

    def __str__(self):
        return f"line {self.position} of {self.statement_id}"


# --- matching (docs/reconciliation.md, "Expected payments", "Rules", "Matching", "Breaks") ----
def _expected_id():
    return new_id("exp")


def _rule_id():
    return new_id("rrl")


def _run_id():
    return new_id("rcn")


def _match_id():
    return new_id("rmt")


def _break_id():
    return new_id("brk")


class ExpectedPayment(Timestamped):
    """Money announced but not yet seen on a statement: matched by the runs to one statement
    line (`direction` as the statement says it: `credit`, money in)."""

    class Status(models.TextChoices):
        UNMATCHED = "unmatched"
        MATCHED = "matched"
        CANCELLED = "cancelled"

    id = models.CharField(primary_key=True, max_length=40, default=_expected_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    currency = models.CharField(max_length=3)
    direction = models.CharField(max_length=6, choices=BankStatementLine.Direction.choices)
    amount_min = models.BigIntegerField()
    amount_max = models.BigIntegerField()
    date_from = models.DateField(null=True, blank=True)
    date_to = models.DateField(null=True, blank=True)
    reference = models.CharField(max_length=140, blank=True)
    end_to_end_id = models.CharField(max_length=140, blank=True)
    trace_number = models.CharField(max_length=40, blank=True)
    metadata = MetadataField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.UNMATCHED)
    matched_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "expected payment"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "status", "currency"], name="expected_open_idx")
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(amount_min__gt=0, amount_max__gte=models.F("amount_min")),
                name="expected_amount_bounds",
            ),
            models.CheckConstraint(
                condition=models.Q(date_from__isnull=True)
                | models.Q(date_to__isnull=True)
                | models.Q(date_to__gte=models.F("date_from")),
                name="expected_date_bounds",
            ),
        ]

    def __str__(self):
        low, high = money(self.amount_min, self.currency), money(self.amount_max, self.currency)
        return f"expected {self.direction} {low}" + ("" if low == high else f" to {high}")


class ReconciliationRule(models.Model):
    """One of the institution's matching rules, tried in `position` order after the exact keys.
    `conditions`: [{"field": ..., "operator": ...}], every one must hold (an amount condition
    within `amount_tolerance` minor units; every condition within `date_window_days`)."""

    class Cardinality(models.TextChoices):
        ONE_TO_ONE = "one_to_one"
        ONE_TO_MANY = "one_to_many", "One statement line, several ledger lines (a batch)"
        MANY_TO_ONE = "many_to_one", "Several statement lines, one ledger line"

    id = models.CharField(primary_key=True, max_length=40, default=_rule_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    name = models.CharField(max_length=100)
    position = models.PositiveIntegerField()
    conditions = models.JSONField()
    amount_tolerance = models.BigIntegerField(default=0)
    date_window_days = models.PositiveSmallIntegerField(default=0)
    cardinality = models.CharField(max_length=11, choices=Cardinality.choices)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "reconciliation rule"
        ordering = ["institution", "position"]
        constraints = [
            models.UniqueConstraint(fields=["institution", "position"], name="recon_rule_position"),
            models.CheckConstraint(
                condition=models.Q(amount_tolerance__gte=0), name="recon_rule_tolerance"
            ),
        ]

    def __str__(self):
        return f"{self.position}. {self.name}"


class ReconciliationRun(models.Model):
    """One run of matching over a statement, or a card network's settlement (exactly one: a
    CHECK), that wrote something (a dry run writes nothing, not even this)."""

    id = models.CharField(primary_key=True, max_length=40, default=_run_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    statement = models.ForeignKey(
        BankStatement, on_delete=models.PROTECT, null=True, blank=True, related_name="runs"
    )
    settlement = models.ForeignKey(
        "NetworkSettlement", on_delete=models.PROTECT, null=True, blank=True, related_name="runs"
    )
    matched_count = models.PositiveIntegerField(default=0)
    breaks_opened = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "reconciliation run"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(statement__isnull=False, settlement__isnull=True)
                | models.Q(statement__isnull=True, settlement__isnull=False),
                name="recon_run_of_one",
            ),
        ]

    def __str__(self):
        return f"run {self.id} of {self.statement_id or self.settlement_id}"


class ReconciliationMatch(models.Model):
    """Statement lines and ledger lines (or an expected payment) found to be the same money.
    Which lines are its: `MatchedStatementLine`, `MatchedLedgerLine` (each line once: a unique
    constraint). `how`: `key` (`key` names which), `rule`, `expected`, `booked` (a
    break's resolution booked the line's money)."""

    class How(models.TextChoices):
        KEY = "key"
        RULE = "rule"
        EXPECTED = "expected"
        # A break's resolution booked the line's money (services.breaks): the new ledger line.
        BOOKED = "booked"

    id = models.CharField(primary_key=True, max_length=40, default=_match_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    run = models.ForeignKey(ReconciliationRun, on_delete=models.PROTECT, related_name="matches")
    how = models.CharField(max_length=8, choices=How.choices)
    key = models.CharField(max_length=16, blank=True)
    rule = models.ForeignKey(
        ReconciliationRule, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    expected_payment = models.OneToOneField(
        ExpectedPayment, on_delete=models.PROTECT, null=True, blank=True, related_name="match"
    )
    # What the statement says less what the ledger says, signed as the statement signs
    # (a credit positive): not 0, an `amount_mismatch` break is open for it.
    difference = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "reconciliation match"
        ordering = ["-id"]

    def __str__(self):
        return f"match {self.id} ({self.how})"


class MatchedStatementLine(models.Model):
    """A statement line's match: at most one (the primary key is the line)."""

    statement_line = models.OneToOneField(
        BankStatementLine, on_delete=models.PROTECT, primary_key=True, related_name="matched"
    )
    match = models.ForeignKey(
        ReconciliationMatch, on_delete=models.PROTECT, related_name="statement_lines"
    )

    class Meta:
        verbose_name = "matched statement line"

    def __str__(self):
        return f"{self.statement_line_id} in {self.match_id}"


class MatchedLedgerLine(models.Model):
    """A ledger line's (an entry of the mirrored account; for a settlement, of card clearing)
    match: at most one (the primary key is the entry)."""

    entry = models.OneToOneField(
        Entry, on_delete=models.PROTECT, primary_key=True, related_name="matched"
    )
    match = models.ForeignKey(
        ReconciliationMatch, on_delete=models.PROTECT, related_name="ledger_lines"
    )

    class Meta:
        verbose_name = "matched ledger line"

    def __str__(self):
        return f"entry {self.entry_id} in {self.match_id}"


class MatchedSettlementRow(models.Model):
    """A network settlement row's match (with card clearing's entries of the transaction TX
    cleared under its network transaction id): at most one (the primary key is the row)."""

    settlement_row = models.OneToOneField(
        "NetworkSettlementRow", on_delete=models.PROTECT, primary_key=True, related_name="matched"
    )
    match = models.ForeignKey(
        ReconciliationMatch, on_delete=models.PROTECT, related_name="settlement_rows"
    )

    class Meta:
        verbose_name = "matched settlement row"

    def __str__(self):
        return f"{self.settlement_row_id} in {self.match_id}"


OPEN_STATES = ("open", "assigned")


class ReconciliationBreak(Timestamped):
    """What the statement and the ledger do not agree on (docs/reconciliation.md, "Breaks").

    `amount`: what the statement says less what the ledger says, for the lines it concerns,
    signed as the statement signs (money in, a credit, positive), in minor units. So the
    mirrored account's money as the bank counts it equals the closing balance less the open
    breaks' amounts. A settlement's break: what the network settled less what TX cleared,
    signed as the settlement signs (from the institution's side: what the network pays it
    positive), so card clearing's movement of the settlement's transactions equals its
    transactions total less the open breaks (docs/reconciliation.md, "The settlement's proof").
    A statement line's break of a kind is open once, a ledger line's (`ledger_only`,
    `tx_only`) and a settlement row's: partial unique constraints."""

    class Kind(models.TextChoices):
        BANK_ONLY = "bank_only"
        LEDGER_ONLY = "ledger_only"
        AMOUNT_MISMATCH = "amount_mismatch"
        DUPLICATE = "duplicate"
        # A card network's settlement against TX's clearing (docs/reconciliation.md, "Matching
        # a settlement"): a row TX has not cleared, a transaction cleared no row settled; and
        # the statements' chain (`services.proof`).
        NETWORK_ONLY = "network_only"
        TX_ONLY = "tx_only"
        # Reserved for the proof (issue 51, item 6).
        MISSING_STATEMENT = "missing_statement"

    class State(models.TextChoices):
        OPEN = "open"
        ASSIGNED = "assigned"
        RESOLVED = "resolved"

    id = models.CharField(primary_key=True, max_length=40, default=_break_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=17, choices=Kind.choices)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OPEN)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    statement = models.ForeignKey(
        BankStatement, on_delete=models.PROTECT, null=True, blank=True, related_name="breaks"
    )
    statement_line = models.ForeignKey(
        BankStatementLine, on_delete=models.PROTECT, null=True, blank=True, related_name="breaks"
    )
    # A settlement's break: the network's side (for every kind but `tx_only`, its row).
    settlement = models.ForeignKey(
        "NetworkSettlement", on_delete=models.PROTECT, null=True, blank=True, related_name="breaks"
    )
    settlement_row = models.ForeignKey(
        "NetworkSettlementRow",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="breaks",
    )
    # A ledger-only break's line; an amount mismatch's lines are its match's.
    entry = models.ForeignKey(
        Entry, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    match = models.ForeignKey(
        ReconciliationMatch,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="breaks",
    )
    # A bank-only line the run matched to an expected payment: known money, not yet booked.
    expected_payment = models.ForeignKey(
        ExpectedPayment, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    run = models.ForeignKey(ReconciliationRun, on_delete=models.PROTECT, related_name="breaks")
    resolution = models.CharField(max_length=40, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    # The value date from which the difference no longer stands (the proof, docs/reconciliation.md
    # "The proof"): the later side's date of the match that resolved it, or the value date of the
    # money a resolution booked. A statement closing before it still counts the break.
    resolved_on = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "reconciliation break"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "state", "kind"], name="recon_break_queue_idx")
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "statement_line"],
                condition=models.Q(statement_line__isnull=False, state__in=OPEN_STATES),
                name="recon_break_line_open_once",
            ),
            models.UniqueConstraint(
                fields=["kind", "entry"],
                condition=models.Q(entry__isnull=False, state__in=OPEN_STATES),
                name="recon_break_entry_open_once",
            ),
            models.UniqueConstraint(
                fields=["kind", "settlement_row"],
                condition=models.Q(settlement_row__isnull=False, state__in=OPEN_STATES),
                name="recon_break_row_open_once",
            ),
            # A statement's opening gap (`services.proof`) is open once.
            models.UniqueConstraint(
                fields=["statement"],
                condition=models.Q(kind="missing_statement", state__in=OPEN_STATES),
                name="recon_break_gap_open_once",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {money(self.amount, self.currency)} ({self.state})"


# --- Card settlement in (docs/reconciliation.md, "Card settlement in") ---


def _settlement_id():
    return new_id("nst")


def _settlement_row_id():
    return new_id("nsr")


class NetworkSettlement(models.Model):
    """What a card network settled with the institution for one settlement date and currency:
    its totals and detail rows (`NetworkSettlementRow`), posted as journals on the date. Every
    amount is signed from the institution's side, in minor units: positive what the network
    pays it, negative what it pays the network. One a network, date and currency (a unique
    constraint): the same content again is the same settlement, other content is refused."""

    class Network(models.TextChoices):
        VISA = "visa", "Visa"
        MASTERCARD = "mastercard", "Mastercard"

    id = models.CharField(primary_key=True, max_length=40, default=_settlement_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    network = models.CharField(max_length=16, choices=Network.choices)
    settlement_date = models.DateField()
    currency = models.CharField(max_length=3)
    purchases = models.BigIntegerField()
    refunds = models.BigIntegerField()
    cash = models.BigIntegerField()
    chargebacks = models.BigIntegerField()
    representments = models.BigIntegerField()
    interchange = models.BigIntegerField()
    scheme_fees = models.BigIntegerField()
    net = models.BigIntegerField()
    # SHA-256 of the content as read (reconciliation.services.settlements.content_digest).
    sha256 = models.CharField(max_length=64)
    row_count = models.PositiveIntegerField(default=0)
    # The journals it posted (none for a part that is 0): the transactions against card
    # clearing, interchange and scheme fees against fees; each against settlement.
    clearing_journal = models.ForeignKey(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    interchange_journal = models.ForeignKey(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    scheme_fees_journal = models.ForeignKey(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "network settlement"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="network_stl_inst_idx")]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "network", "settlement_date", "currency"],
                name="network_stl_once_a_day",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    purchases__lte=0,
                    cash__lte=0,
                    representments__lte=0,
                    refunds__gte=0,
                    chargebacks__gte=0,
                )
                & models.Q(
                    net=models.F("purchases")
                    + models.F("refunds")
                    + models.F("cash")
                    + models.F("chargebacks")
                    + models.F("representments")
                    + models.F("interchange")
                    + models.F("scheme_fees")
                ),
                name="network_stl_totals_add_up",
            ),
        ]

    def __str__(self):
        return f"{self.get_network_display()} {self.settlement_date} ({self.currency})"


class NetworkSettlementRow(models.Model):
    """One transaction the network settled, in the order it was sent (`position`, from 1), keyed
    by the network's transaction id: the id TX gave the network for it (module docs)."""

    class Kind(models.TextChoices):
        PURCHASE = "purchase"
        REFUND = "refund"
        CASH = "cash"
        CHARGEBACK = "chargeback"
        REPRESENTMENT = "representment"

    # What the institution pays the network (a negative amount) and what it is paid.
    PAID = (Kind.PURCHASE, Kind.CASH, Kind.REPRESENTMENT)
    RECEIVED = (Kind.REFUND, Kind.CHARGEBACK)

    id = models.CharField(
        primary_key=True, max_length=40, default=_settlement_row_id, editable=False
    )
    settlement = models.ForeignKey(NetworkSettlement, on_delete=models.PROTECT, related_name="rows")
    position = models.PositiveIntegerField()
    network_transaction_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    amount = models.BigIntegerField()
    interchange = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "network settlement row"
        ordering = ["settlement", "position"]
        indexes = [
            # The matching's key (docs/reconciliation.md): a transaction's rows across days.
            models.Index(fields=["network_transaction_id"], name="network_stl_row_txn_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["settlement", "position"], name="network_stl_row_once"),
            models.UniqueConstraint(
                fields=["settlement", "network_transaction_id", "kind"],
                name="network_stl_row_txn_once",
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=["purchase", "cash", "representment"], amount__lt=0)
                | models.Q(kind__in=["refund", "chargeback"], amount__gt=0),
                name="network_stl_row_amount_signed",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.network_transaction_id} of {self.settlement_id}"
