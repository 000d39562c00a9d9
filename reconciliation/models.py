"""The bank's statements (docs/reconciliation.md): a header per file, its lines, its bytes."""

from django.db import models
from django.utils import timezone

from accounts.models import Account, Journal
from core.ids import new_id
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
