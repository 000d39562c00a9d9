"""Disputes (issue 32; docs/disputes.md): a cardholder contests a presented card payment.

A dispute moves through the network's stages (`Status`) and closes with an `Outcome`. Its money
is a **liability split** of the disputed `amount`, which PostgreSQL keeps whole at every step:

    recovered + cardholder_liable + written_off + remaining = amount

- `recovered`: what the network gave back (a chargeback, less a representment);
- `cardholder_liable`: what the cardholder bears (their claim denied, withdrawn or lost: the
  provisional credit reversed) — the issue's "denied";
- `written_off`: what the issuer absorbs;
- `remaining`: what is still open; 0 once closed.

`provisional_credit` is what the cardholder was credited for the dispute and has not given back:
provisionally while it runs; once it is closed, what they keep (`recovered + written_off`), after
a reversal that the dispute policy's notice may hold until `provisional_credit_reverses_on`.
Each step that moves money is one balanced journal (`DisputeStep`), against the institution's
`dispute_clearing` account (docs/disputes.md, "Money").
"""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account, Journal
from authorizations.models import Authorization
from cards.models import Card
from core.ids import new_id
from core.metadata import MetadataField
from core.models import CreatedBy, Timestamped
from core.money import money
from institutions.models import Institution


def _dispute_id():
    return new_id("dsp")


def _step_id():
    return new_id("dstp")


class Dispute(CreatedBy, Timestamped):
    class Reason(models.TextChoices):
        FRAUD = "fraud"
        NOT_RECEIVED = "not_received"
        NOT_AS_DESCRIBED = "not_as_described"
        DUPLICATE = "duplicate"
        CANCELLED = "cancelled"
        CREDIT_NOT_PROCESSED = "credit_not_processed"
        INCORRECT_AMOUNT = "incorrect_amount"
        OTHER = "other"

    class Status(models.TextChoices):
        DRAFT = "draft"
        SUBMITTED = "submitted"
        CHARGEBACK = "chargeback"
        REPRESENTMENT = "representment"
        PREARBITRATION = "prearbitration"
        ARBITRATION = "arbitration"
        CLOSED = "closed"

    class Outcome(models.TextChoices):
        WON = "won"
        LOST = "lost"
        PARTLY_WON = "partly_won"
        WITHDRAWN = "withdrawn"
        DENIED = "denied"
        EXPIRED = "expired"

    id = models.CharField(primary_key=True, max_length=40, default=_dispute_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    authorization = models.ForeignKey(
        Authorization, on_delete=models.PROTECT, related_name="disputes"
    )
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    reason = models.CharField(max_length=32, choices=Reason.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)
    resolution_reason = models.CharField(max_length=300, blank=True)
    cardholder_contacted_at = models.DateTimeField()
    note = models.CharField(max_length=1000, blank=True)
    # Structured evidence and file references (docs/disputes.md, "Evidence"), while a draft.
    evidence = models.JSONField(default=dict, blank=True)
    metadata = MetadataField()
    # --- Money (the module docstring).
    provisional_credit = models.BigIntegerField(default=0)
    recovered = models.BigIntegerField(default=0)
    cardholder_liable = models.BigIntegerField(default=0)
    written_off = models.BigIntegerField(default=0)
    remaining = models.BigIntegerField()
    # A closed dispute's reversal of the credit the cardholder does not keep, held for the
    # policy's notice: posted by the deadline job the day after (docs/disputes.md, "Money").
    provisional_credit_reverses_on = models.DateField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="dispute_amount_positive"),
            models.CheckConstraint(
                condition=Q(
                    provisional_credit__gte=0,
                    recovered__gte=0,
                    cardholder_liable__gte=0,
                    written_off__gte=0,
                    remaining__gte=0,
                ),
                name="dispute_money_nonneg",
            ),
            # The liability split, whole at every step.
            models.CheckConstraint(
                condition=Q(
                    amount=F("recovered")
                    + F("cardholder_liable")
                    + F("written_off")
                    + F("remaining")
                ),
                name="dispute_liability_split",
            ),
            models.CheckConstraint(
                condition=Q(provisional_credit__lte=F("amount")),
                name="dispute_provisional_credit_at_most_amount",
            ),
            # Closed: an outcome, nothing open. Open: no outcome.
            models.CheckConstraint(
                condition=(Q(status="closed") & ~Q(outcome="") & Q(remaining=0))
                | (~Q(status="closed") & Q(outcome="")),
                name="dispute_closed_has_outcome",
            ),
            # Only a closed dispute holds a reversal, and only of a credit it gave.
            models.CheckConstraint(
                condition=Q(provisional_credit_reverses_on__isnull=True)
                | Q(status="closed", provisional_credit__gt=0),
                name="dispute_reversal_held_when_closed",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="dispute_institution_idx"),
            models.Index(fields=["institution", "status", "-id"], name="dispute_status_idx"),
            models.Index(fields=["card", "-id"], name="dispute_card_idx"),
            models.Index(fields=["account", "-id"], name="dispute_account_idx"),
            models.Index(fields=["authorization"], name="dispute_authorization_idx"),
            # The deadline job's scan of the reversals held.
            models.Index(
                fields=["provisional_credit_reverses_on"],
                condition=Q(provisional_credit_reverses_on__isnull=False),
                name="dispute_reversal_held_idx",
            ),
        ]

    def __str__(self):
        return f"{self.id} {money(self.amount, self.currency)} ({self.outcome or self.status})"

    @property
    def outcome_or_none(self) -> str | None:
        return self.outcome or None

    @property
    def resolution_reason_or_none(self) -> str | None:
        return self.resolution_reason or None


class DisputeStep(CreatedBy):
    """One move of a dispute: its stage before and after, and the money it moved (a balanced
    journal, `amount` > 0) or none. The dispute's history, in order."""

    class Kind(models.TextChoices):
        CREATED = "created"
        SUBMITTED = "submitted"
        PROVISIONAL_CREDIT = "provisional_credit"
        PROVISIONAL_CREDIT_REVERSED = "provisional_credit_reversed"
        REVERSAL_NOTICE = "reversal_notice"
        CREDIT = "credit"
        CHARGEBACK = "chargeback"
        REPRESENTMENT = "representment"
        PREARBITRATION_FILED = "prearbitration_filed"
        PREARBITRATION_ACCEPTED = "prearbitration_accepted"
        PREARBITRATION_DECLINED = "prearbitration_declined"
        ARBITRATION_FILED = "arbitration_filed"
        ARBITRATION_WON = "arbitration_won"
        ARBITRATION_LOST = "arbitration_lost"
        WRITE_OFF = "write_off"
        CLOSED = "closed"

    id = models.CharField(primary_key=True, max_length=40, default=_step_id, editable=False)
    dispute = models.ForeignKey(Dispute, on_delete=models.PROTECT, related_name="steps")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    from_status = models.CharField(max_length=16, choices=Dispute.Status.choices, blank=True)
    to_status = models.CharField(max_length=16, choices=Dispute.Status.choices)
    amount = models.BigIntegerField(default=0)
    journal = models.OneToOneField(
        Journal, on_delete=models.PROTECT, null=True, blank=True, related_name="dispute_step"
    )
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gte=0), name="dispute_step_amount_nonneg"),
            # Money moved has its journal; a step without money has none.
            models.CheckConstraint(
                condition=Q(amount=0, journal__isnull=True)
                | Q(amount__gt=0, journal__isnull=False),
                name="dispute_step_journal",
            ),
        ]
        indexes = [models.Index(fields=["dispute", "id"], name="dispute_step_idx")]

    def __str__(self):
        return f"{self.id} {self.kind} {money(self.amount, self.dispute.currency)}"

    @property
    def from_status_or_none(self) -> str | None:
        return self.from_status or None

    @property
    def reason_or_none(self) -> str | None:
        return self.reason or None


class DisputeDeadline(models.Model):
    """One due date of a dispute (docs/disputes.md, "Deadlines"), set when it is filed from its
    card product's dispute policy and the institution's calendar: by `due_on` (the institution's
    calendar day, still in time on that day) the provisional credit is given, the dispute is
    filed with the network, or it is resolved. `met_at` when that happened; the deadline job
    emits `dispute.deadline_approaching` once (`approaching_at`) and `dispute.deadline_missed`
    once (`missed_at`) for those not met."""

    class Name(models.TextChoices):
        PROVISIONAL_CREDIT = "provisional_credit"
        NETWORK_FILING = "network_filing"
        RESOLUTION = "resolution"

    dispute = models.ForeignKey(Dispute, on_delete=models.PROTECT, related_name="deadlines")
    name = models.CharField(max_length=24, choices=Name.choices)
    due_on = models.DateField()
    met_at = models.DateTimeField(null=True, blank=True)
    approaching_at = models.DateTimeField(null=True, blank=True)
    missed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["due_on", "name"]
        constraints = [
            models.UniqueConstraint(fields=["dispute", "name"], name="dispute_deadline_unique"),
        ]
        indexes = [
            # The deadline job's scan: only the deadlines still watched, soonest first.
            models.Index(
                fields=["due_on"],
                condition=Q(met_at__isnull=True, missed_at__isnull=True),
                name="dispute_deadline_watched_idx",
            ),
        ]

    def __str__(self):
        return f"{self.dispute_id} {self.name} {self.due_on}"
