"""Money to and from other banks (docs/payments.md; docs/design.md section 15): the accounts at
other banks (`ExternalAccount`), the orders that move money to or from them over a rail
(`PaymentOrder`), the files a rail exchanges with the bank (`RailFile`), and each institution's
standing at its sponsor bank for the ACH rail (`AchProfile`) and in SEPA (`SepaProfile`).

One model for every rail: ACH (NACHA files) and SEPA (ISO 20022), so a rail's own fields are
few and named for it (`ach_*`, `sepa_*`), and the states, money and events are the order's.

An order's states (`PaymentOrder.Status`): `needs_approval` (a second person must approve it),
`approved` (waiting for its cut-off), `scheduled` (taken into a file being written), `sent` (the
file is in the bank's inbox), `settled` (its effective date passed without a rejection), and the
ends `cancelled` (before a file), `rejected` (by the bank, before settlement) and `returned`
(after). PostgreSQL keeps each state whole (CHECKs below): a file once scheduled, a return code
once returned.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from core import crypto
from core.ids import new_id
from core.metadata import MetadataField
from core.models import CreatedBy, Timestamped
from core.money import money
from institutions.models import Institution


def _external_account_id():
    return new_id("exa")


def _payment_order_id():
    return new_id("po")


def _rail_file_id():
    return new_id("rfl")


def _inbound_entry_id():
    return new_id("ibe")


def _stop_payment_id():
    return new_id("stp")


def _debtor_mandate_id():
    return new_id("dmd")


def _blocked_creditor_id():
    return new_id("bcr")


def _mandate_id():
    return new_id("mdt")


def _debtor_refund_id():
    return new_id("drf")


def _debtor_refusal_id():
    return new_id("dre")


def _recall_id():
    return new_id("rcl")


class Rail(models.TextChoices):
    ACH = "ach", "ACH (next day)"
    ACH_SAME_DAY = "ach_same_day", "ACH same day"
    SEPA_CT = "sepa_ct", "SEPA credit"
    SEPA_INST = "sepa_inst", "SEPA Instant"
    SEPA_DD = "sepa_dd", "SEPA debit"


ACH_RAILS = frozenset({Rail.ACH, Rail.ACH_SAME_DAY})
SEPA_RAILS = frozenset({Rail.SEPA_CT, Rail.SEPA_INST, Rail.SEPA_DD})


class AchProfile(Timestamped):
    """An institution's standing at its sponsor bank (the ODFI) for ACH: who it is in a file's
    header, which routing number receives its customers' inbound entries, and its cut-offs in
    its time zone (docs/payments.md, "Cut-offs"). Made by the operators
    (`manage.py ach_profile`, the back office); an institution without one sends no ACH."""

    institution = models.OneToOneField(
        Institution, on_delete=models.PROTECT, primary_key=True, related_name="ach_profile"
    )
    # The ODFI: the file's immediate origin and every entry's trace prefix (its 8-digit id).
    odfi_routing_number = models.CharField(max_length=9)
    odfi_name = models.CharField(max_length=23)
    # Where the file goes: the ODFI's ACH operator (the Federal Reserve, or the ODFI itself).
    destination_routing_number = models.CharField(max_length=9)
    destination_name = models.CharField(max_length=23)
    # The originator in every batch header: the company identification and name.
    company_id = models.CharField(max_length=10)
    company_name = models.CharField(max_length=16)
    # The routing number the institution's own accounts are reached at (inbound entries).
    receiving_routing_number = models.CharField(max_length=9)
    # Cut-offs, local times "HH:MM" in the institution's time zone: the next-day window's, and
    # the same-day windows' in their order.
    next_day_cutoff = models.CharField(max_length=5, default="16:45")
    same_day_cutoffs = models.JSONField(default=list, blank=True)
    # The most one same-day entry may be (NACHA's limit: USD 1,000,000).
    same_day_limit = models.BigIntegerField(default=100_000_000)
    # Orders to external accounts not verified (prenote or staff) are refused.
    require_verified = models.BooleanField(default=False)
    # How long a collected debit's money is held on the account for returns (R01, R09): banking
    # days after settlement.
    debit_hold_days = models.PositiveSmallIntegerField(default=2)
    # Orders above this amount (minor units) wait for a staff user's approval (four eyes: the
    # API key asked, a person approves); None: none waits.
    approval_above = models.BigIntegerField(null=True, blank=True)
    # The sequence of the last trace number TX gave (its orders' entries and its returns'):
    # the next file continues after it, under the cut-offs' lock; trace numbers never repeat.
    last_trace_sequence = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "ACH profile"

    def __str__(self):
        return f"ACH profile of {self.institution_id}"


class SepaProfile(Timestamped):
    """An institution's standing in SEPA (docs/payments.md, "The SEPA profile"): as a fintech
    on a partner bank (`initiation`: it sends pain.001 / pain.008 to the bank) or as a bank in
    the clearing system itself (`interbank`: pacs.008 / pacs.003), its BIC, the account its
    SEPA money settles through, its creditor identifier for direct debits, and its cut-offs in
    its time zone. Made by the operators (`manage.py sepa_profile`); an institution without one
    sends no SEPA order (422 `rail_not_available`), as one without an ACH profile sends no ACH.
    """

    class Kind(models.TextChoices):
        INITIATION = "initiation", "Initiation (a customer of a partner bank)"
        INTERBANK = "interbank", "Interbank (a participant of the clearing)"

    institution = models.OneToOneField(
        Institution, on_delete=models.PROTECT, primary_key=True, related_name="sepa_profile"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Initiation: the partner bank's BIC (the agent of every order); interbank: the
    # institution's own BIC in the clearing.
    bic = models.CharField(max_length=11)
    # The institution's account that its SEPA money settles through (initiation: its account
    # at the partner bank, the debtor of its credit transfers); blank for interbank.
    settlement_iban = models.CharField(max_length=34, blank=True)
    # The SEPA creditor identifier (EPC262-08 5.15) its direct debits collect under; blank: it
    # collects none.
    creditor_identifier = models.CharField(max_length=35, blank=True)
    # Cut-offs, local times "HH:MM" in the institution's time zone, of its SEPA days: credit
    # transfers' and direct debits' (SEPA Instant has none).
    credit_transfer_cutoff = models.CharField(max_length=5, default="15:00")
    direct_debit_cutoff = models.CharField(max_length=5, default="15:00")
    # As the ACH profile's: orders to unverified external accounts are refused; orders above
    # `approval_above` (minor units) wait for a staff user's approval.
    require_verified = models.BooleanField(default=False)
    approval_above = models.BigIntegerField(null=True, blank=True)
    # Direct debits: the calendar days the creditor pre-notifies its debtor before a due date
    # (the rulebook's 14 unless creditor and debtor agreed on fewer), and how many SEPA days a
    # collected debit's money is held for the debtor bank's returns (Core: D+5).
    pre_notification_days = models.PositiveSmallIntegerField(default=14)
    debit_hold_days = models.PositiveSmallIntegerField(default=5)
    # The IBANs of the institution's own EUR accounts (`payments.account_ibans`, docs/payments.md,
    # "Inbound SEPA"): its country and the bank code their BBAN starts with (bank and, where the
    # country has one, branch), as a partner bank issues virtual IBANs; the account's number
    # follows. Blank: its accounts have no IBAN and no SEPA credit reaches them.
    iban_country = models.CharField(max_length=2, blank=True, default="")
    iban_bank_code = models.CharField(max_length=9, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "SEPA profile"
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="interbank") | ~Q(settlement_iban=""),
                name="sepa_profile_initiation_settles",
            ),
            models.CheckConstraint(
                condition=Q(iban_country="", iban_bank_code="")
                | (~Q(iban_country="") & ~Q(iban_bank_code="")),
                name="sepa_profile_iban_bank_whole",
            ),
            # An IBAN names one account of one institution: no two institutions issue under the
            # same bank code (and the clearing finds the institution of an IBAN by it).
            models.UniqueConstraint(
                fields=["iban_country", "iban_bank_code"],
                condition=~Q(iban_bank_code=""),
                name="sepa_profile_iban_bank_once",
            ),
        ]

    def __str__(self):
        return f"SEPA profile of {self.institution_id}"


class ExternalAccount(CreatedBy, Timestamped):
    """An account at another bank, of a customer's or of the institution itself, that payment
    orders pay to or collect from: an `ach` one (a US account: routing number, account number,
    type) or a `sepa` one (an IBAN and, optionally, its bank's BIC). Its account number or IBAN
    is a sensitive identifier: stored encrypted (`core.crypto`, bound to this row and column),
    shown by its last four, never in a URL, a log line or an event (docs/payments.md, "External
    accounts")."""

    class Kind(models.TextChoices):
        ACH = "ach", "ACH (a US account)"
        SEPA = "sepa", "SEPA (an IBAN)"

    class AccountType(models.TextChoices):
        CHECKING = "checking"
        SAVINGS = "savings"

    class Status(models.TextChoices):
        UNVERIFIED = "unverified"
        VERIFYING = "verifying", "Verifying (prenote sent)"
        VERIFIED = "verified"
        FAILED = "failed", "Failed (prenote returned)"

    id = models.CharField(
        primary_key=True, max_length=40, default=_external_account_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # None: the institution's own account elsewhere.
    customer = models.ForeignKey(
        "customers.Customer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="external_accounts",
        db_index=False,
    )
    kind = models.CharField(max_length=4, choices=Kind.choices)
    holder_name = models.CharField(max_length=140)
    # ISO 3166-1 numeric, as every country of the API (a SEPA account's: its IBAN's country).
    country_code = models.CharField(max_length=3)
    currency = models.CharField(max_length=3)
    # ACH's details (blank for a SEPA account).
    ach_routing_number = models.CharField(max_length=9, blank=True)
    ach_account_number_encrypted = models.TextField(editable=False, blank=True)
    ach_account_number_last4 = models.CharField(max_length=4, editable=False, blank=True)
    ach_account_type = models.CharField(max_length=8, choices=AccountType.choices, blank=True)
    # SEPA's (blank for an ACH account): the IBAN sealed, its last four, the BIC if given.
    sepa_iban_encrypted = models.TextField(editable=False, blank=True, default="")
    sepa_iban_last4 = models.CharField(max_length=4, editable=False, blank=True, default="")
    sepa_bic = models.CharField(max_length=11, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNVERIFIED)
    verified_at = models.DateTimeField(null=True, blank=True)
    # How it was verified: "prenote" or "staff".
    verified_by = models.CharField(max_length=8, blank=True)
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "external account"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="external_account_inst_idx"),
            models.Index(
                fields=["customer", "-id"],
                condition=Q(customer__isnull=False),
                name="external_account_customer_idx",
            ),
        ]
        constraints = [
            # Each kind has its own details and none of the other's.
            models.CheckConstraint(
                condition=(
                    Q(kind="ach", ach_routing_number__regex=r"^[0-9]{9}$")
                    & ~Q(ach_account_number_encrypted="")
                    & Q(ach_account_type__in=["checking", "savings"])
                    & Q(sepa_iban_encrypted="", sepa_iban_last4="", sepa_bic="")
                )
                | (
                    Q(kind="sepa", currency="EUR")
                    & ~Q(sepa_iban_encrypted="")
                    & Q(sepa_bic__regex=r"^([A-Z0-9]{8}([A-Z0-9]{3})?)?$")
                    & Q(ach_routing_number="", ach_account_number_encrypted="")
                    & Q(ach_account_number_last4="", ach_account_type="")
                ),
                name="external_account_details_of_its_kind",
            ),
            models.CheckConstraint(
                condition=Q(status="verified", verified_at__isnull=False)
                | (~Q(status="verified") & Q(verified_at__isnull=True)),
                name="external_account_verified_when",
            ),
        ]

    def __str__(self):
        return f"{self.holder_name} ••••{self.number_last4}"

    @property
    def number_last4(self) -> str:
        """The last four of its account number (ACH) or IBAN (SEPA): what is ever shown."""
        return (
            self.sepa_iban_last4 if self.kind == self.Kind.SEPA else self.ach_account_number_last4
        )

    def ach_account_number(self) -> str:
        """The account number in clear: for the file that pays it, never for display."""
        return crypto.decrypt(self.ach_account_number_encrypted, context=self._context())

    def sealed_account_number(self, number: str) -> dict:
        """The stored fields of `number`: sealed, and its last four (set them, or pass them to
        `row_update`)."""
        return {
            "ach_account_number_encrypted": crypto.encrypt(number, context=self._context()),
            "ach_account_number_last4": number[-4:],
        }

    def _context(self) -> str:
        return f"payments.ExternalAccount.ach_account_number:{self.id}"

    def sepa_iban(self) -> str:
        """The IBAN in clear (electronic form): for the file that pays it, never for display."""
        return crypto.decrypt(self.sepa_iban_encrypted, context=self._iban_context())

    def sealed_iban(self, iban: str) -> dict:
        """The stored fields of `iban` (electronic form): sealed, and its last four."""
        return {
            "sepa_iban_encrypted": crypto.encrypt(iban, context=self._iban_context()),
            "sepa_iban_last4": iban[-4:],
        }

    def _iban_context(self) -> str:
        return f"payments.ExternalAccount.sepa_iban:{self.id}"


class RailFile(Timestamped):
    """One file exchanged with the bank over a rail: written by TX into its outbox (orders, and
    the returns of inbound entries TX cannot apply), or read from its inbox (the bank's returns,
    notifications of change, inbound entries). Its bytes are kept with their SHA-256, and the
    same bytes are one file (a unique index): an inbound file read twice is applied once."""

    class Direction(models.TextChoices):
        OUTBOUND = "outbound"
        INBOUND = "inbound"

    class Status(models.TextChoices):
        WRITTEN = "written", "Written (not delivered yet)"
        DELIVERED = "delivered", "Delivered (in the outbox)"
        APPLIED = "applied", "Applied (read from the inbox)"
        REFUSED = "refused", "Refused whole (not a valid file)"

    id = models.CharField(primary_key=True, max_length=40, default=_rail_file_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    rail = models.CharField(max_length=16, choices=Rail.choices)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    status = models.CharField(max_length=9, choices=Status.choices)
    name = models.CharField(max_length=200)
    sha256 = models.CharField(max_length=64)
    content = models.BinaryField()
    # Outbound: the window it was written for (the cut-off's local date and time), and the
    # file id modifier of that day (A-Z, 0-9).
    window_date = models.DateField(null=True, blank=True)
    window = models.CharField(max_length=5, blank=True)
    file_id_modifier = models.CharField(max_length=1, blank=True)
    entry_count = models.PositiveIntegerField(default=0)
    debit_total = models.BigIntegerField(default=0)
    credit_total = models.BigIntegerField(default=0)
    # A refused inbound file: why, with the record and field (never a number of an account).
    error = models.CharField(max_length=500, blank=True)
    # Outbound: when it reached the bank (written into the outbox): its orders are `sent`.
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "rail file"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="rail_file_inst_idx")]
        constraints = [
            models.UniqueConstraint(fields=["institution", "sha256"], name="rail_file_bytes_once"),
            # A cut-off makes one file: run twice, or twice at once, the second finds it.
            models.UniqueConstraint(
                fields=["institution", "rail", "window_date", "window"],
                condition=Q(direction="outbound"),
                name="rail_file_one_per_window",
            ),
            models.UniqueConstraint(
                fields=["institution", "window_date", "file_id_modifier"],
                condition=Q(direction="outbound"),
                name="rail_file_modifier_per_day",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.direction}, {self.status})"


class PaymentOrder(CreatedBy, Timestamped):
    """Money to (`credit`) or from (`debit`) an external account over a rail (module docstring;
    docs/payments.md, "Payment orders")."""

    # The latest requested execution (or due) date, from today: a year.
    MAX_DAYS_AHEAD = 365

    class Direction(models.TextChoices):
        CREDIT = "credit", "Credit (pay out)"
        DEBIT = "debit", "Debit (collect)"

    class Status(models.TextChoices):
        NEEDS_APPROVAL = "needs_approval"
        APPROVED = "approved"
        SCHEDULED = "scheduled"
        SENT = "sent"
        SETTLED = "settled"
        CANCELLED = "cancelled"
        REJECTED = "rejected"
        RETURNED = "returned"

    class SecCode(models.TextChoices):
        PPD = "PPD", "PPD (consumer)"
        CCD = "CCD", "CCD (corporate)"
        WEB = "WEB", "WEB (consumer, authorized online)"

    id = models.CharField(
        primary_key=True, max_length=40, default=_payment_order_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # None for a prenote: a zero-amount entry that moves no account's money.
    account = models.ForeignKey(
        "accounts.Account",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    external_account = models.ForeignKey(
        ExternalAccount, on_delete=models.PROTECT, related_name="orders", db_index=False
    )
    direction = models.CharField(max_length=8, choices=Direction.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    rail = models.CharField(max_length=16, choices=Rail.choices)
    # ACH: the SEC code and the company entry description of the batch (NACHA: 10 characters,
    # e.g. "PAYROLL"); blank on a SEPA rail.
    sec_code = models.CharField(max_length=3, choices=SecCode.choices, blank=True)
    description = models.CharField(max_length=10, blank=True)
    # Unstructured remittance information: an ACH addenda's payment related information (80
    # characters), SEPA's `Ustrd` (140).
    remittance_info = models.CharField(max_length=140, blank=True)
    # SEPA: the end-to-end identification (35 characters, unique in the institution) and a
    # structured creditor reference (ISO 11649 "RF..."), instead of `remittance_info`.
    end_to_end_id = models.CharField(max_length=35, blank=True, default="")
    creditor_reference = models.CharField(max_length=25, blank=True, default="")
    # A prenote: a zero-amount entry that verifies the external account.
    prenote = models.BooleanField(default=False)
    requested_execution_date = models.DateField()
    effective_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    # A credit's money, held from its creation until its file takes it.
    hold = models.OneToOneField(
        "accounts.Hold", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # A collected debit's money, held for its return window once it settled.
    returns_hold = models.OneToOneField(
        "accounts.Hold", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    file = models.ForeignKey(
        RailFile, on_delete=models.PROTECT, null=True, blank=True, related_name="orders"
    )
    # Its reference in its file: ACH's trace number; SEPA's order id's last 15 characters (the
    # bank's answers name a SEPA order by its end-to-end id).
    trace_number = models.CharField(max_length=15, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    # A return: its code as the bank sent it (ACH's R01, SEPA's AC04), the normalized reason,
    # when, and whether it came after its window (accepted all the same: a return is a fact).
    return_code = models.CharField(max_length=4, blank=True)
    return_reason = models.CharField(max_length=48, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    return_late = models.BooleanField(default=False)
    # A returned credit of which less came back than was sent (the returning bank's charges, a
    # recall's FOCR return): what came back; None, the whole amount.
    returned_amount = models.BigIntegerField(null=True, blank=True)
    # A returned credit whose account was closed: its money waits in the rail's suspense account
    # for staff to place.
    returned_to_suspense = models.BooleanField(default=False)
    # A rejection or cancellation: why, in a few words.
    ended_reason = models.CharField(max_length=200, blank=True)
    # The four-eyes request it waited for (backoffice.ApprovalRequest), if it did.
    approval_id = models.CharField(max_length=40, blank=True)
    # A SEPA direct debit: the mandate it collects under, whether it is the last under a
    # recurrent one (FNAL: none may follow), and its sequence type (FRST, RCUR, FNAL, OOFF),
    # decided when the cut-off puts it in a file.
    mandate = models.ForeignKey(
        "Mandate",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="collections",
        db_index=False,
    )
    sequence_type = models.CharField(max_length=4, blank=True, default="")
    final_collection = models.BooleanField(default=False)
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "payment order"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="payment_order_inst_idx"),
            models.Index(
                fields=["account", "-id"],
                condition=Q(account__isnull=False),
                name="payment_order_account_idx",
            ),
            # The cut-off's scan: the approved orders of an institution and rail, by date.
            models.Index(
                fields=["institution", "rail", "requested_execution_date"],
                condition=Q(status="approved"),
                name="payment_order_approved_idx",
            ),
            # A return names its order by trace number; a cut-off continues after the last.
            models.Index(
                fields=["institution", "trace_number"],
                condition=~Q(trace_number=""),
                name="payment_order_trace_idx",
            ),
            models.Index(fields=["external_account", "-id"], name="payment_order_external_idx"),
            models.Index(
                fields=["mandate", "id"],
                condition=Q(mandate__isnull=False),
                name="payment_order_mandate_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(prenote=False) & Q(amount__gt=0) & Q(account__isnull=False))
                | Q(prenote=True, amount=0, account__isnull=True),
                name="payment_order_amount_positive",
            ),
            # In a file from `scheduled` on, with its trace number; never before.
            models.CheckConstraint(
                condition=(
                    Q(status__in=["needs_approval", "approved", "cancelled"])
                    & Q(file__isnull=True, trace_number="")
                )
                | (
                    Q(status__in=["scheduled", "sent", "settled", "returned"])
                    & Q(file__isnull=False)
                    & ~Q(trace_number="")
                )
                | Q(status="rejected"),
                name="payment_order_file_when_scheduled",
            ),
            # Returned after settlement, or rejected before it by a return of the bank's: its
            # code; never a code otherwise.
            models.CheckConstraint(
                condition=(Q(status="returned") & ~Q(return_code="") & Q(returned_at__isnull=False))
                | Q(status="rejected")
                | (~Q(status__in=["returned", "rejected"]) & Q(return_code="")),
                name="payment_order_return_when_returned",
            ),
            # A credit holds its money until its file takes it; a debit never holds.
            models.CheckConstraint(
                condition=Q(direction="credit") | Q(hold__isnull=True),
                name="payment_order_hold_of_a_credit",
            ),
            # Each rail's own fields and currency: ACH's SEC code in USD; SEPA's end-to-end id
            # in EUR, a credit transfer a credit, a direct debit a debit.
            models.CheckConstraint(
                condition=(
                    Q(rail__in=["ach", "ach_same_day"], currency="USD")
                    & Q(sec_code__in=["PPD", "CCD", "WEB"])
                    & Q(end_to_end_id="", creditor_reference="")
                )
                | (
                    Q(currency="EUR", sec_code="", description="")
                    & ~Q(end_to_end_id="")
                    & (
                        Q(rail__in=["sepa_ct", "sepa_inst"], direction="credit")
                        | Q(rail="sepa_dd", direction="debit")
                    )
                ),
                name="payment_order_fields_of_its_rail",
            ),
            models.CheckConstraint(
                condition=Q(remittance_info="") | Q(creditor_reference=""),
                name="payment_order_one_remittance",
            ),
            # A direct debit under a mandate, and nothing else under one.
            models.CheckConstraint(
                condition=Q(rail="sepa_dd", mandate__isnull=False)
                | (
                    ~Q(rail="sepa_dd")
                    & Q(mandate__isnull=True, sequence_type="", final_collection=False)
                ),
                name="payment_order_mandate_of_a_direct_debit",
            ),
            # A client's end-to-end id names one order of the institution (a database rule: two
            # requests at once with one id, one order).
            models.UniqueConstraint(
                fields=["institution", "end_to_end_id"],
                condition=~Q(end_to_end_id=""),
                name="payment_order_end_to_end_id_once",
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.direction} {money(self.amount, self.currency)} ({self.status})"


class Mandate(CreatedBy, Timestamped):
    """A SEPA direct debit mandate (docs/payments.md, "Mandates and direct debits"): the debtor's
    authorization, signed on `signature_date`, for the institution (its SEPA creditor
    identifier) to collect from a SEPA external account, under the Core or B2B scheme, once
    (`one_off`) or again and again (`recurrent`). Its reference is unique in the institution
    (a database rule). An amendment of its reference or debtor account is kept (`original_*`)
    until the next collection carries it to the debtor's bank."""

    class Scheme(models.TextChoices):
        CORE = "CORE", "SEPA Core (consumers)"
        B2B = "B2B", "SEPA B2B (businesses)"

    class Type(models.TextChoices):
        RECURRENT = "recurrent"
        ONE_OFF = "one_off", "One-off"

    class Status(models.TextChoices):
        ACTIVE = "active"
        CANCELLED = "cancelled"

    id = models.CharField(primary_key=True, max_length=40, default=_mandate_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    external_account = models.ForeignKey(
        ExternalAccount, on_delete=models.PROTECT, related_name="mandates", db_index=False
    )
    reference = models.CharField(max_length=35)
    signature_date = models.DateField()
    scheme = models.CharField(max_length=4, choices=Scheme.choices)
    type = models.CharField(max_length=9, choices=Type.choices)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_reason = models.CharField(max_length=200, blank=True)
    # An amendment not yet told to the debtor's bank: the reference and the debtor account the
    # bank knows (blank / None: that one did not change).
    original_reference = models.CharField(max_length=35, blank=True, default="")
    original_external_account = models.ForeignKey(
        ExternalAccount,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    amended_at = models.DateTimeField(null=True, blank=True)
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "mandate"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="mandate_inst_idx"),
            models.Index(fields=["external_account", "-id"], name="mandate_external_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "reference"], name="mandate_reference_once"
            ),
            models.CheckConstraint(
                condition=Q(status="active", cancelled_at__isnull=True)
                | Q(status="cancelled", cancelled_at__isnull=False),
                name="mandate_cancelled_when",
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.scheme} {self.type} ({self.status})"


class RailNotice(models.Model):
    """What the bank said of an entry in an inbound file: a return (with a dishonored or
    contested one), or a notification of change. Kept whether or not TX knows the entry: a
    return for an unknown trace number is recorded here (`order` null) for reconciliation,
    never an error. A change's corrected values are applied to the external account, and only
    which fields changed is kept here (an account number is not)."""

    class Kind(models.TextChoices):
        RETURN = "return"
        DISHONORED = "dishonored", "Dishonored return"
        CONTESTED = "contested", "Contested dishonored return"
        CHANGE = "change", "Notification of change"
        # ISO 20022 (SEPA): a status report's rejection (pain.002 RJCT), another status of an
        # end-to-end id TX does not know, and a booking (camt.054) of one it does not know.
        REJECT = "reject", "Rejection (status report)"
        STATUS = "status", "Status (status report)"
        BOOKING = "booking", "Booking (notification)"
        # The answer to a recall (camt.029): of one TX knows, or of an end-to-end id it does not.
        RECALL = "recall", "Answer to a recall"

    id = models.BigAutoField(primary_key=True)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    file = models.ForeignKey(RailFile, on_delete=models.PROTECT, related_name="notices")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # As the bank sent it (R01, C03, AC04, ACCP...), and normalized (`insufficient_funds`, ...).
    code = models.CharField(max_length=4)
    reason = models.CharField(max_length=48)
    # The entry it names: ACH's trace number, SEPA's end-to-end id.
    original_trace_number = models.CharField(max_length=35)
    order = models.ForeignKey(
        PaymentOrder, on_delete=models.PROTECT, null=True, blank=True, related_name="notices"
    )
    # Outside its window (a return is booked all the same).
    late = models.BooleanField(default=False)
    changed_fields = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "rail notice"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="rail_notice_inst_idx"),
            models.Index(
                fields=["institution", "-id"],
                condition=Q(order__isnull=True),
                name="rail_notice_unmatched_idx",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.code} of {self.original_trace_number}"


class Recall(CreatedBy, Timestamped):
    """A recall of a SEPA credit transfer after it was sent (docs/payments.md, "Recalls"): the
    institution asks, through its partner bank, for the money back, with one of the EPC's
    reasons. `requested` until the payments job writes it into a camt.056 in the `sepa` outbox,
    `sent` once delivered, then `accepted` or `rejected` by the answer (camt.029), whose code is
    kept as sent beside its normalized reason. An order has at most one recall that is not
    rejected (a database rule): one on its way, or the one accepted."""

    class Status(models.TextChoices):
        REQUESTED = "requested"
        SENT = "sent"
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    id = models.CharField(primary_key=True, max_length=40, default=_recall_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    order = models.ForeignKey(PaymentOrder, on_delete=models.PROTECT, related_name="recalls")
    # The EPC's recall reason as sent (DUPL, TECH, FRAD, AC03, AM09, CUST) and normalized.
    reason_code = models.CharField(max_length=4)
    reason = models.CharField(max_length=48)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.REQUESTED)
    # The camt.056 it went out in, and the camt.029 that answered it.
    file = models.ForeignKey(
        RailFile, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    answer_file = models.ForeignKey(
        RailFile, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # A refusal's reason as the bank sent it (NOOR, ARDT, CUST, LEGL, NOAS, AC04, AM04) and
    # normalized; blank when accepted.
    answer_code = models.CharField(max_length=35, blank=True)
    answer_reason = models.CharField(max_length=48, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "recall"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="recall_inst_idx")]
        constraints = [
            # One recall of an order on its way or accepted: a second is refused (two requests
            # at once too).
            models.UniqueConstraint(
                fields=["order"],
                condition=Q(status__in=["requested", "sent", "accepted"]),
                name="recall_one_open_per_order",
            ),
            models.CheckConstraint(
                # Requested: in a camt.056 once written, `sent` once it is delivered.
                condition=Q(status="requested", answered_at__isnull=True)
                | Q(status="sent", file__isnull=False, answered_at__isnull=True)
                | Q(status="accepted", answered_at__isnull=False, answer_code="")
                | (Q(status="rejected", answered_at__isnull=False) & ~Q(answer_code="")),
                name="recall_state_whole",
            ),
        ]

    def __str__(self):
        return f"{self.id} of {self.order_id} {self.reason_code} ({self.status})"


class InboundEntry(Timestamped):
    """An entry of another bank's, in the sponsor bank's file, that credits (`credit`: money in)
    or debits (`debit`: money out) one of the institution's accounts (docs/payments.md,
    "Inbound entries"). Received with its file; on its settlement date applied to the account,
    or, when the account cannot take it, returned in TX's next file with its reason (a credit
    for no account waits in suspense for staff to apply or return it).

    States: `received` (until its settlement date), `applied`, `suspense` (a credit no account
    takes: its money in the rail's suspense account), `returning` (to go back in TX's next
    file) and `returned` (in it). The account number it names is sealed as an external
    account's is: TX's own accounts' numbers are sensitive identifiers too.

    A SEPA credit (rail `sepa_ct`, booked on the institution's settlement account, or
    `sepa_inst`, offered by the clearing: docs/payments.md, "Inbound SEPA") is one too, its
    IBAN sealed where the account number is; it is never `received` past the transaction that
    records it: applied, to suspense with the reason code its return would carry (AC01, AC04,
    AC06), or, an instant one, `rejected` (nothing moved, its reason code kept). A collection
    the clearing presents from one of the accounts (rail `sepa_dd`, a debit: "Inbound direct
    debits") is applied or `rejected` the same way."""

    class Direction(models.TextChoices):
        CREDIT = "credit", "Credit (money in)"
        DEBIT = "debit", "Debit (money out)"

    class Status(models.TextChoices):
        RECEIVED = "received", "Received (until its settlement date)"
        APPLIED = "applied"
        SUSPENSE = "suspense", "In suspense (no account takes it)"
        RETURNING = "returning", "Returning (in TX's next file)"
        RETURNED = "returned"
        REJECTED = "rejected", "Rejected (refused before settlement: nothing moved)"

    id = models.CharField(
        primary_key=True, max_length=40, default=_inbound_entry_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    file = models.ForeignKey(RailFile, on_delete=models.PROTECT, related_name="inbound_entries")
    rail = models.CharField(max_length=16, choices=Rail.choices)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    prenote = models.BooleanField(default=False)
    # The entry as it came: its transaction code, SEC code, the originator's trace number and
    # ODFI, company and description (its batch header's), the receiver's name and id.
    # An ACH entry's (a SEPA credit has none of these but the originator's name: its debtor's).
    transaction_code = models.PositiveSmallIntegerField(null=True, blank=True)
    sec_code = models.CharField(max_length=3, blank=True)
    trace_number = models.CharField(max_length=15, blank=True)
    odfi_identification = models.CharField(max_length=8, blank=True)
    company_name = models.CharField(max_length=70)
    company_id = models.CharField(max_length=10)
    company_entry_description = models.CharField(max_length=10)
    receiver_name = models.CharField(max_length=22, blank=True)
    identification_number = models.CharField(max_length=15, blank=True)
    # A SEPA credit's: the reference it is applied once by (a booking's: the partner bank's
    # account servicer reference; an instant credit's: its transaction id, unique for the
    # debtor's bank `sepa_agent_bic`), its end-to-end id and remittance information.
    sepa_reference = models.CharField(max_length=35, blank=True, default="")
    sepa_agent_bic = models.CharField(max_length=11, blank=True, default="")
    end_to_end_id = models.CharField(max_length=35, blank=True, default="")
    remittance_info = models.CharField(max_length=140, blank=True, default="")
    # The account it names (None: none of the institution's has that number).
    account = models.ForeignKey(
        "accounts.Account",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    account_number_encrypted = models.TextField(editable=False)
    account_number_last4 = models.CharField(max_length=4, editable=False)
    settlement_date = models.DateField()
    status = models.CharField(max_length=12, choices=Status.choices)
    applied_at = models.DateTimeField(null=True, blank=True)
    # A return TX sends: its code and normalized reason, the file and TX's trace number (a
    # SEPA credit in suspense: the code its return would carry; rejected: why).
    return_code = models.CharField(max_length=4, blank=True)
    return_reason = models.CharField(max_length=48, blank=True)
    return_file = models.ForeignKey(
        RailFile, on_delete=models.PROTECT, null=True, blank=True, related_name="returns"
    )
    return_trace_number = models.CharField(max_length=15, blank=True)
    # Returned R08: the customer's stop payment it matched.
    stop_payment = models.ForeignKey(
        "StopPayment",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="stopped_entries",
        db_index=False,
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "inbound entry"
        verbose_name_plural = "inbound entries"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="inbound_entry_inst_idx"),
            models.Index(
                fields=["account", "-id"],
                condition=Q(account__isnull=False),
                name="inbound_entry_account_idx",
            ),
            # The payments job's scans: received ones by date, and the returns to file.
            models.Index(
                fields=["settlement_date"],
                condition=Q(status="received"),
                name="inbound_entry_received_idx",
            ),
            models.Index(
                fields=["institution"],
                condition=Q(status="returning"),
                name="inbound_entry_returning_idx",
            ),
        ]
        constraints = [
            # The same entry in another file (the bank sending it again) is the same entry:
            # an ODFI's trace numbers do not repeat within a settlement date.
            models.UniqueConstraint(
                fields=["institution", "odfi_identification", "trace_number", "settlement_date"],
                condition=Q(rail__in=["ach", "ach_same_day"]),
                name="inbound_entry_once",
            ),
            # A SEPA credit told again (the same booking in another camt.054, the clearing
            # offering the same instant credit twice) is the same credit.
            models.UniqueConstraint(
                fields=["institution", "rail", "sepa_agent_bic", "sepa_reference"],
                condition=Q(rail__in=["sepa_ct", "sepa_inst", "sepa_dd"]),
                name="inbound_entry_sepa_once",
            ),
            models.CheckConstraint(
                condition=Q(rail__in=["ach", "ach_same_day"], transaction_code__isnull=False)
                | (Q(rail__in=["sepa_ct", "sepa_inst", "sepa_dd"]) & ~Q(sepa_reference="")),
                name="inbound_entry_reference_of_its_rail",
            ),
            models.CheckConstraint(
                condition=Q(prenote=True, amount=0) | Q(prenote=False, amount__gt=0),
                name="inbound_entry_amount_positive",
            ),
            # A return's code from `returning` on, in a file from `returned`; never before (but
            # a SEPA credit's in suspense, the code its return would carry, and a rejected
            # one's reason).
            models.CheckConstraint(
                condition=(
                    Q(status__in=["received", "applied"])
                    & Q(return_code="", return_file__isnull=True)
                )
                | Q(status="suspense", return_file__isnull=True)
                | (
                    Q(status__in=["returning", "rejected"])
                    & ~Q(return_code="")
                    & Q(return_file__isnull=True)
                )
                | (
                    Q(status="returned")
                    & ~Q(return_code="")
                    & Q(return_file__isnull=False)
                    # An ACH return's trace number; a SEPA credit's return is in the answer to
                    # its recall (a camt.029), which has none.
                    & (~Q(return_trace_number="") | Q(rail__in=["sepa_ct", "sepa_inst"]))
                ),
                name="inbound_entry_return_when_returning",
            ),
            # Only a credit's money waits in suspense (a prenote has none).
            models.CheckConstraint(
                condition=~Q(status="suspense") | Q(direction="credit", prenote=False),
                name="inbound_entry_suspense_of_a_credit",
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.direction} {money(self.amount, self.currency)} ({self.status})"

    def account_number(self) -> str:
        """The account number the entry named, in clear: for the return that answers it."""
        return crypto.decrypt(self.account_number_encrypted, context=self._context())

    def sealed_account_number(self, number: str) -> dict:
        return {
            "account_number_encrypted": crypto.encrypt(number, context=self._context()),
            "account_number_last4": number[-4:],
        }

    def _context(self) -> str:
        return f"payments.InboundEntry.account_number:{self.id}"


class StopPayment(CreatedBy, Timestamped):
    """A customer's instruction to their bank: return the ACH debits of one originator (its
    Company Identification, as the batch header has it) to one account, or only those of one
    amount, until it expires or is cancelled (docs/payments.md, "Stop payments"). An inbound
    debit it matches on its settlement date is returned R08 (`payments.services.inbound`).

    Stored `active` or `cancelled`; an active one whose `expires_at` has passed is shown as
    `expired` (`shown_status`) and stops nothing."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        EXPIRED = "expired", "Expired (its time passed)"
        CANCELLED = "cancelled"

    id = models.CharField(primary_key=True, max_length=40, default=_stop_payment_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # The originator's Company Identification, uppercase, without the header's trailing
    # padding (as an inbound entry stores it).
    company_id = models.CharField(max_length=10)
    # Only a debit of exactly this amount (minor units of the account's currency); None: any.
    amount = models.BigIntegerField(null=True, blank=True)
    currency = models.CharField(max_length=3)
    # None: until cancelled.
    expires_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    # Stored `active` or `cancelled`: `expired` is `active` past `expires_at` (`shown_status`).
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "stop payment"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="stop_payment_inst_idx"),
            models.Index(fields=["account", "-id"], name="stop_payment_account_idx"),
            # What an inbound debit's settlement looks up: the account's active stops of its
            # originator.
            models.Index(
                fields=["account", "company_id"],
                condition=Q(status="active"),
                name="stop_payment_active_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__isnull=True) | Q(amount__gt=0),
                name="stop_payment_amount_positive",
            ),
            models.CheckConstraint(
                condition=Q(status="active", cancelled_at__isnull=True)
                | Q(status="cancelled", cancelled_at__isnull=False),
                name="stop_payment_cancelled_when",
            ),
            models.CheckConstraint(
                condition=~Q(company_id="") & Q(company_id__regex=r"^[ -~]{1,10}$"),
                name="stop_payment_company_id",
            ),
        ]

    def __str__(self):
        amount = "any amount" if self.amount is None else money(self.amount, self.currency)
        return f"{self.id} of {self.company_id} ({amount}, {self.shown_status()})"

    def shown_status(self, now=None) -> str:
        """`expired` for an active stop whose time has passed; else as stored."""
        if self.status == self.Status.ACTIVE and self.expires_at is not None:
            if self.expires_at <= (now or timezone.now()):
                return self.Status.EXPIRED
        return self.status


class RailJournal(models.Model):
    """A journal a payment order or an inbound entry posted (in a file, settled, returned,
    applied, to suspense...): its money's history, in order, for the back office and
    reconciliation. Exactly one of `order` and `inbound_entry`."""

    journal = models.OneToOneField(
        "accounts.Journal", on_delete=models.PROTECT, related_name="rail_journal"
    )
    order = models.ForeignKey(
        PaymentOrder, on_delete=models.PROTECT, null=True, blank=True, related_name="journals"
    )
    inbound_entry = models.ForeignKey(
        InboundEntry,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="journals",
    )

    class Meta:
        verbose_name = "rail journal"
        constraints = [
            models.CheckConstraint(
                condition=Q(order__isnull=False, inbound_entry__isnull=True)
                | Q(order__isnull=True, inbound_entry__isnull=False),
                name="rail_journal_of_one",
            ),
        ]

    def __str__(self):
        return f"{self.journal_id} of {self.order_id or self.inbound_entry_id}"


def _inbound_recall_id():
    return new_id("rcr")


class InboundRecall(Timestamped):
    """Another bank's recall of a SEPA credit TX received into one of the institution's accounts
    (docs/payments.md, "Recalls TX answers"): its camt.056, forwarded by the partner bank, and
    TX's answer, a camt.029, within the scheme's days. `received` until the institution accepts
    it (the money goes back: the credit `returned`) or refuses it with the EPC's reason; one
    that names no credit TX holds is refused at once (NOOR, or ARDT when it went back already),
    and one left unanswered past `answer_due` is refused NOAS by the payments job."""

    class Status(models.TextChoices):
        RECEIVED = "received"
        ACCEPTED = "accepted"
        REFUSED = "refused"

    id = models.CharField(
        primary_key=True, max_length=40, default=_inbound_recall_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # The credit it recalls (None: none of TX's, refused at once).
    inbound_entry = models.ForeignKey(
        InboundEntry,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="recalls",
    )
    # The camt.056 it came in, and the camt.029 TX answered it with.
    file = models.ForeignKey(RailFile, on_delete=models.PROTECT, related_name="+")
    answer_file = models.ForeignKey(
        RailFile, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The recall as the camt.056 gave it: its case (assignment id, by the assigner's BIC), the
    # cancellation id, the original transaction's ids, amount and settlement date, the reason
    # (raw, up to a proprietary one's 35, and normalized).
    case_id = models.CharField(max_length=35)
    assigner_bic = models.CharField(max_length=11)
    assignee_bic = models.CharField(max_length=11)
    cancellation_id = models.CharField(max_length=35)
    original_message_id = models.CharField(max_length=35)
    original_message_type = models.CharField(max_length=35)
    original_instruction_id = models.CharField(max_length=35, blank=True)
    original_end_to_end_id = models.CharField(max_length=35)
    original_transaction_id = models.CharField(max_length=35)
    original_amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    original_settlement_date = models.DateField()
    reason_code = models.CharField(max_length=35)
    reason = models.CharField(max_length=48)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RECEIVED)
    # The last day to answer (15 TARGET2 business days after it came), and the answer: blank
    # when accepted, a refusal's EPC code and normalized name.
    answer_due = models.DateField()
    answer_code = models.CharField(max_length=4, blank=True)
    answer_reason = models.CharField(max_length=48, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "recall TX answers"
        verbose_name_plural = "recalls TX answers"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="inbound_recall_inst_idx"),
            models.Index(
                fields=["answer_due"],
                condition=Q(status="received"),
                name="inbound_recall_due_idx",
            ),
        ]
        constraints = [
            # The same recall told again (its file twice, or in another file) is one recall.
            models.UniqueConstraint(
                fields=["institution", "assigner_bic", "case_id", "cancellation_id"],
                name="inbound_recall_once",
            ),
            models.CheckConstraint(
                condition=Q(status="received", answered_at__isnull=True, answer_code="")
                | Q(status="accepted", answered_at__isnull=False, answer_code="")
                | (Q(status="refused", answered_at__isnull=False) & ~Q(answer_code="")),
                name="inbound_recall_state_whole",
            ),
        ]

    def __str__(self):
        return f"recall {self.reason_code} of {self.original_end_to_end_id} ({self.status})"


class DebtorMandate(CreatedBy, Timestamped):
    """A mandate a customer gave another bank's creditor to collect from one of its accounts by
    SEPA Direct Debit, as its bank knows it (docs/payments.md, "Inbound direct debits"): the
    creditor's SEPA identifier and the mandate reference. A collection the clearing presents to
    the account is debited only under an active one (MD01 otherwise)."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        CANCELLED = "cancelled"

    id = models.CharField(
        primary_key=True, max_length=40, default=_debtor_mandate_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    creditor_identifier = models.CharField(max_length=35)
    mandate_reference = models.CharField(max_length=35)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "debtor mandate"
        ordering = ["-id"]
        indexes = [models.Index(fields=["account", "-id"], name="debtor_mandate_account_idx")]
        constraints = [
            # What a collection looks up, and one active mandate of a creditor's reference.
            models.UniqueConstraint(
                fields=["account", "creditor_identifier", "mandate_reference"],
                condition=Q(status="active"),
                name="debtor_mandate_active_once",
            ),
            models.CheckConstraint(
                condition=Q(status="active", cancelled_at__isnull=True)
                | Q(status="cancelled", cancelled_at__isnull=False),
                name="debtor_mandate_cancelled_when",
            ),
        ]

    def __str__(self):
        return f"{self.id} of {self.creditor_identifier} ({self.status})"


class BlockedCreditor(CreatedBy, Timestamped):
    """A creditor (its SEPA identifier) a customer forbids to collect from one of its accounts
    (docs/payments.md, "Inbound direct debits"): its collections are rejected SL01 before
    settlement, mandate or not, while the block is active."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        CANCELLED = "cancelled"

    id = models.CharField(
        primary_key=True, max_length=40, default=_blocked_creditor_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    creditor_identifier = models.CharField(max_length=35)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "blocked creditor"
        ordering = ["-id"]
        indexes = [models.Index(fields=["account", "-id"], name="blocked_creditor_account_idx")]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "creditor_identifier"],
                condition=Q(status="active"),
                name="blocked_creditor_active_once",
            ),
            models.CheckConstraint(
                condition=Q(status="active", cancelled_at__isnull=True)
                | Q(status="cancelled", cancelled_at__isnull=False),
                name="blocked_creditor_cancelled_when",
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.creditor_identifier} ({self.status})"


class DebtorRefund(CreatedBy, Timestamped):
    """A customer's refund of a SEPA Core direct debit another bank's creditor collected from
    one of its accounts (docs/payments.md, "Refunds of inbound direct debits"): within 8 weeks
    of the collection's settlement, MD06; until 13 months, MD01, when it had no valid mandate.
    The money back on the account at once, the collection `returned` in TX's pacs.004 to the
    creditor's bank. One per collection (a database rule)."""

    id = models.CharField(
        primary_key=True, max_length=40, default=_debtor_refund_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    inbound_entry = models.ForeignKey(
        InboundEntry, on_delete=models.PROTECT, related_name="refunds", db_index=False
    )
    # MD06 (refund) or MD01 (no valid mandate) and its normalized reason; the customer's words.
    reason_code = models.CharField(max_length=4)
    reason = models.CharField(max_length=48)
    note = models.CharField(max_length=200, blank=True)
    # TX's pacs.004 and the return's id in it (RtrId: the refund's id's last 15 characters).
    file = models.ForeignKey(RailFile, on_delete=models.PROTECT, related_name="+")
    return_id = models.CharField(max_length=35)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "debtor refund"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="debtor_refund_inst_idx")]
        constraints = [
            # One refund of a collection: a second is refused, two claims at once too.
            models.UniqueConstraint(fields=["inbound_entry"], name="debtor_refund_once"),
            models.CheckConstraint(
                condition=Q(reason_code__in=["MD06", "MD01"]), name="debtor_refund_code"
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.reason_code} of {self.inbound_entry_id}"


class DebtorRefusal(CreatedBy, Timestamped):
    """A customer's refusal of a SEPA direct debit another bank's creditor presented from one of
    its accounts, before its settlement date (docs/payments.md, "Refusals of inbound direct
    debits"): the collection `rejected` MS02, nothing moved, TX's pacs.002 answering the
    clearing. One per collection (a database rule)."""

    id = models.CharField(
        primary_key=True, max_length=40, default=_debtor_refusal_id, editable=False
    )
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    inbound_entry = models.ForeignKey(
        InboundEntry, on_delete=models.PROTECT, related_name="refusals", db_index=False
    )
    # The customer's words (never sent to the creditor).
    note = models.CharField(max_length=140, blank=True)
    # TX's pacs.002 rejecting the collection.
    file = models.ForeignKey(RailFile, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "debtor refusal"
        ordering = ["-id"]
        indexes = [models.Index(fields=["institution", "-id"], name="debtor_refusal_inst_idx")]
        constraints = [
            # One refusal of a collection: a second is refused, two at once too.
            models.UniqueConstraint(fields=["inbound_entry"], name="debtor_refusal_once"),
        ]

    def __str__(self):
        return f"{self.id} of {self.inbound_entry_id}"
