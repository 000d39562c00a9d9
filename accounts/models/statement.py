"""Statement lines (`StatementLine`, "transactions" in the spec and the API): what an account
holder sees, one line per account per posting, with its type and settlement status (spec 2.4).

Types: `CashInc` / `CashDec` for loads, unloads and transfers (and captured holds); `Goods`,
`Cash` and `Return` come with card transactions. Everything posted at once is `Presentment`;
`Unsettled` is an authorization awaiting its presentment (card transactions).
"""

from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Collate
from django.utils import timezone

from core.ids import new_id
from core.money import money
from institutions.models import Institution

from .accounts import Account
from .adjustments import Adjustment
from .fees import Fee
from .holds import Hold
from .ledger import Journal

# What `StatementLine.status` can say.
TRANSACTION_STATUSES = ["posted", "pending", "reversed", "expired"]

# The listing order of statement lines (see Meta.indexes).
POSITION = Collate(F("id"), "C")


def _transaction_id():
    return new_id("txn")


class StatementLine(models.Model):
    class Type(models.TextChoices):
        GOODS = "Goods"
        CASH = "Cash"
        CASH_DEC = "CashDec"
        CASH_INC = "CashInc"
        RETURN = "Return"

    class SettlementStatus(models.TextChoices):
        PRESENTMENT = "Presentment"
        UNSETTLED = "Unsettled"

    class Category(models.TextChoices):
        FEE = "fee"
        DISPUTE = "dispute"  # a dispute's provisional credit or its reversal (docs/disputes.md)
        INTEREST = "interest"  # interest posted at a period's end (docs/interest.md)

    CREDIT_TYPES = frozenset({Type.CASH_INC, Type.RETURN})

    id = models.CharField(primary_key=True, max_length=40, default=_transaction_id, editable=False)
    # No index of their own: lines are read per account or card (the indexes below), never per
    # institution alone, and nothing deletes an institution (PROTECT never has to look).
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="statement_lines", db_index=False
    )
    type = models.CharField(max_length=16, choices=Type.choices)
    settlement_status = models.CharField(max_length=16, choices=SettlementStatus.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=500, blank=True)
    merchant = models.JSONField(null=True, blank=True)
    journal = models.ForeignKey(
        Journal,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_journal_idx below
    )
    hold = models.ForeignKey(
        Hold,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_hold_idx below
    )
    transfer = models.ForeignKey(
        "transfers.Transfer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_transfer_idx below
    )
    card = models.ForeignKey(
        "cards.Card",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_card_idx below
    )
    authorization = models.ForeignKey(
        "authorizations.Authorization",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_authorization_idx below
    )
    card_return = models.ForeignKey(
        "authorizations.CardReturn",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_card_return_idx below
    )
    adjustment = models.ForeignKey(
        Adjustment,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_adjustment_idx below
    )
    fee = models.ForeignKey(
        Fee,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_fee_idx below
    )
    dispute = models.ForeignKey(
        "disputes.Dispute",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="statement_lines",
        db_index=False,  # txn_dispute_idx below
    )
    # What the line is, beyond its type: "fee" for a fee charged or waived (docs/fees.md),
    # "dispute" for a dispute's provisional credit or its reversal, "interest" for interest
    # posted (docs/interest.md, "On statements"); null for every other line.
    category = models.CharField(max_length=16, choices=Category.choices, null=True, blank=True)
    # A card payment in another currency than the account's: what the merchant charged, in its
    # currency (docs/card-transactions.md, "Foreign currency"); null for every other line.
    merchant_amount = models.BigIntegerField(null=True, blank=True)
    merchant_currency = models.CharField(max_length=3, null=True, blank=True)
    # Its journal's value date when that is earlier than the posting (`Journal.value_at`): a
    # dispute's provisional credit counts from the payment it disputes; null for every other.
    value_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        # Moved here from the `transactions` app with its table and rows (statement lines are
        # part of the accounts' ledger; `transactions` keeps the HTTP listing), then renamed
        # from `Transaction` (it clashed with `django.db.transaction`): the table keeps its name,
        # and staff still read "transactions" in the admin.
        db_table = "transactions_transaction"
        verbose_name = "transaction"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="transaction_amount_positive"),
            models.CheckConstraint(
                condition=Q(merchant_amount__isnull=True, merchant_currency__isnull=True)
                | Q(merchant_amount__gt=0, merchant_currency__isnull=False),
                name="transaction_merchant_amount_pair",
            ),
        ]
        # Newest first per account, with or without a type / status filter: one index range
        # scan per page whatever the table size (date filters are id ranges, `core.ids`). The
        # lists order by `id COLLATE "C"` (`POSITION`): the same order for these ASCII ids, but
        # one the primary key cannot give, so PostgreSQL never walks the whole table's newest
        # rows backwards looking for one account's (x100 slower at 1 M lines for an account
        # younger than the table: bench/listing.py).
        indexes = [
            models.Index(F("account"), POSITION.desc(), name="txn_account_idx"),
            models.Index(F("account"), F("type"), POSITION.desc(), name="txn_account_type_idx"),
            models.Index(
                F("account"),
                F("settlement_status"),
                POSITION.desc(),
                name="txn_account_status_idx",
            ),
            models.Index(
                F("card"),
                POSITION.desc(),
                condition=Q(card__isnull=False),
                name="txn_card_idx",
            ),
            models.Index(
                fields=["authorization"],
                condition=Q(authorization__isnull=False),
                name="txn_authorization_idx",
            ),
            # The line(s) of a journal, a hold (clearing finds its line), a transfer, a return,
            # an adjustment: most lines have only some of these, so each index holds only the
            # lines that have it (a NULL is indexed too, otherwise).
            models.Index(fields=["journal"], name="txn_journal_idx"),
            *(
                models.Index(
                    fields=[name], condition=Q(**{f"{name}__isnull": False}), name=f"txn_{name}_idx"
                )
                for name in ("hold", "transfer", "card_return", "adjustment", "fee", "dispute")
            ),
        ]

    def __str__(self):
        return f"{self.type} {money(self.amount, self.currency)} {self.account_id}"

    @property
    def status(self) -> str:
        """posted: the money moved; pending: an authorization awaiting its presentment;
        reversed / expired: an authorization released before it was presented."""
        if self.settlement_status == self.SettlementStatus.PRESENTMENT or self.hold_id is None:
            return "posted"
        return {"active": "pending", "released": "reversed", "expired": "expired"}.get(
            self.hold.status, "posted"
        )

    @property
    def is_credit(self) -> bool:
        return self.type in self.CREDIT_TYPES
