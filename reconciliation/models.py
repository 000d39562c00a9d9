"""The bank's statements (docs/reconciliation.md): a header per file, its lines, its bytes."""

from django.db import models
from django.utils import timezone

from accounts.models import Account
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
