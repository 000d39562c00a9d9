"""Accounts with their balances stored on the row.

`posted` is the sum of the account's ledger entries (credits minus debits), `pending` the sum of
its active holds, and `available = posted - pending + overdraft_limit` (a generated column). A
balance is read from one row, never summed from history. Customer accounts may not go below
zero available (CHECK constraint), but by what the card network forced on them: an advice or a
force post is never declined (docs/card-transactions.md, "Messages the network does not ask"),
so one that takes an account past its available balance raises `network_overdraft` by what it
took beyond, and the CHECK allows that much below zero; every later change of the balances
lowers it to what is still owed (`accounts/sql/network_overdraft.sql`), so it never becomes room
for another debit. The institution's internal accounts (funding, settlement, card clearing,
fees) carry the other side of every journal and may go below zero.

The balances are bigint columns: a posting that would take one past their range is refused
(422 `balance_out_of_range`, by the posting functions, accounts/sql/posting.sql), and so is an
overdraft limit that would take `available` past it (`account_set_overdraft_limit`).
"""

from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Right
from django.utils import timezone

from core.ids import new_id
from core.metadata import MetadataField
from core.models import Timestamped
from institutions.models import Institution

from .products import AccountProduct

# The most a balance column holds (bigint); the least is -BALANCE_MAX - 1.
BALANCE_MAX = 2**63 - 1


def _account_id():
    return new_id("acc")


class Account(Timestamped):
    class Kind(models.TextChoices):
        CUSTOMER = "customer"
        INTERNAL = "internal"

    class Status(models.TextChoices):
        ACTIVE = "active"
        FROZEN = "frozen"
        CLOSED = "closed"

    class InternalCode(models.TextChoices):
        FUNDING = "funding", "Funding (loads and unloads)"
        SETTLEMENT = "settlement", "Settlement (captured holds)"
        CARD_CLEARING = "card_clearing", "Card network clearing"
        FEES = "fees", "Fees"
        # Disputes (docs/disputes.md): what the issuer fronts and recovers, and what it absorbs.
        DISPUTE_CLEARING = "dispute_clearing", "Dispute clearing"
        DISPUTE_LOSSES = "dispute_losses", "Dispute losses (written off)"
        # Just-in-time funding (docs/decisioning.md, "Just-in-time funding"): what the program
        # has put at the bank to fund its cardholders' payments as it approves them. Unlike the
        # other internal accounts it may not go below zero, but by the `overdraft_limit` the
        # institution grants the program (a CHECK).
        PROGRAM_FUNDING = "program_funding", "Program funding (just-in-time)"
        # Payment orders over rails (docs/payments.md), per currency: money in flight in a
        # file, the bank's settlement account at the rail (its mirror), what customers owe for
        # returns they could not cover, and inbound money not yet placed.
        RAIL_CLEARING = "rail_clearing", "Rail clearing (in files)"
        RAIL_SETTLEMENT = "rail_settlement", "Rail settlement"
        RETURNS_RECEIVABLE = "returns_receivable", "Returns receivable"
        RAIL_SUSPENSE = "rail_suspense", "Rail suspense (inbound, not yet placed)"
        # Interest accrued day by day (docs/interest.md, "Booked daily"), per currency: on
        # deposits, expense -> payable (owed to customers until posted); on overdrafts,
        # receivable (owed by customers until posted) -> income.
        INTEREST_EXPENSE = "interest_expense", "Interest expense (deposits)"
        INTEREST_PAYABLE = "interest_payable", "Interest payable (accrued on deposits)"
        INTEREST_RECEIVABLE = "interest_receivable", "Interest receivable (accrued on overdrafts)"
        INTEREST_INCOME = "interest_income", "Interest income (overdrafts)"
        # Deposit interest withheld at posting (docs/interest.md, "Posting"), owed to the tax
        # authority.
        INTEREST_WITHHOLDING_TAX = (
            "interest_withholding_tax",
            "Interest withholding tax (payable to the tax authority)",
        )

    id = models.CharField(primary_key=True, max_length=40, default=_account_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="accounts")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.CUSTOMER)
    internal_code = models.CharField(
        max_length=32, choices=InternalCode.choices, null=True, blank=True
    )
    customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="accounts",
    )
    # The second holder of a joint account (docs/design.md section 8: two holders, one card each).
    secondary_customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="joint_accounts",
    )
    product = models.ForeignKey(
        AccountProduct, on_delete=models.PROTECT, null=True, blank=True, related_name="accounts"
    )
    currency = models.CharField(max_length=3)
    # Digits with a Luhn check digit; a sensitive identifier (bodies only, never URLs or logs).
    account_number = models.CharField(max_length=20, null=True, blank=True, editable=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    posted = models.BigIntegerField(default=0)
    pending = models.BigIntegerField(default=0)
    overdraft_limit = models.BigIntegerField(default=0)
    # What the network's advices and force posts took the account beyond its available balance
    # and is not yet paid back: 0 but for an account they overdrew (accounts.posting, FORCED).
    network_overdraft = models.BigIntegerField(default=0, db_default=0)
    available = models.GeneratedField(
        expression=F("posted") - F("pending") + F("overdraft_limit"),
        output_field=models.BigIntegerField(),
        db_persist=True,
    )
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "account_number"], name="account_number_unique"
            ),
            models.UniqueConstraint(
                fields=["institution", "internal_code", "currency"],
                condition=Q(kind="internal"),
                name="internal_account_unique",
            ),
            models.CheckConstraint(condition=Q(pending__gte=0), name="account_pending_nonneg"),
            models.CheckConstraint(
                condition=Q(overdraft_limit__gte=0), name="account_overdraft_nonneg"
            ),
            models.CheckConstraint(
                condition=Q(network_overdraft__gte=0), name="account_network_overdraft_nonneg"
            ),
            # A customer account never has less than nothing available (overdraft included),
            # but by what the network forced on it and is not yet paid back.
            models.CheckConstraint(
                condition=Q(kind="internal")
                | Q(posted__gte=F("pending") - F("overdraft_limit") - F("network_overdraft")),
                name="account_available_nonneg",
            ),
            # The program's funding account holds what the program prefunded, and no less than
            # the credit the institution grants it.
            models.CheckConstraint(
                condition=~Q(internal_code="program_funding")
                | Q(posted__gte=F("pending") - F("overdraft_limit")),
                name="account_program_funding_nonneg",
            ),
            models.CheckConstraint(
                condition=Q(secondary_customer__isnull=True) | ~Q(secondary_customer=F("customer")),
                name="account_joint_holders_differ",
            ),
            models.CheckConstraint(
                condition=(Q(kind="internal") & Q(internal_code__isnull=False))
                | (Q(kind="customer") & Q(internal_code__isnull=True)),
                name="account_internal_code_iff_internal",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="account_institution_idx"),
            models.Index(fields=["customer", "-id"], name="account_customer_idx"),
            # The back office's search (backoffice/search.py): the number's last four, and
            # through them the whole number (the unique index leads with the institution).
            models.Index(Right("account_number", 4), name="account_number_last4_idx"),
        ]

    def __str__(self):
        if self.kind == self.Kind.INTERNAL:
            return f"{self.institution} {self.internal_code} {self.currency}"
        return f"{self.id} ({self.currency})"

    def is_held_by(self, customer_id: str) -> bool:
        return customer_id in (self.customer_id, self.secondary_customer_id)

    @property
    def is_internal(self) -> bool:
        return self.kind == self.Kind.INTERNAL
