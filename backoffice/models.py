"""The back office's own records: the sign-in lockouts of staff usernames (backoffice.lockouts)
and the approval requests of the four-eyes flow (backoffice.services.approvals)."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.ids import new_id
from core.models import Timestamped


class SignInLockout(models.Model):
    """One lockout of a staff username by django-axes: when it began, the address of the
    failure that tripped it, and the sign-ins refused while it lasted. Kept for good (axes'
    own attempt rows go when the lockout is lifted or cools off)."""

    # As typed at sign-in: a username nobody has is locked out (and recorded) too.
    username = models.CharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    last_refused_at = models.DateTimeField(default=timezone.now)
    refused_attempts = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = "sign-in lockout"
        indexes = [models.Index(fields=["username", "-last_refused_at"], name="lockout_user_idx")]

    def __str__(self):
        return f"{self.username} locked out at {self.started_at:%Y-%m-%d %H:%M:%S}"


def _approval_request_id():
    return new_id("apr")


class ApprovalRequest(Timestamped):
    """Four eyes where money moves (docs/back-office.md, "Four eyes"): one staff user asks for a
    change of money (`kind`, on `target_id`, with `parameters`), another approves it, and only
    then does the real service run, as the approver, in the approval's transaction; or rejects
    it and nothing moves. `amount` and `currency` are what the change is measured by against
    the institution's thresholds (`ApprovalThreshold`) and shown by: an adjustment's or a
    waived fee's amount, a raised overdraft limit, the highest card limit raised; a PIN unblock
    has none.

    PostgreSQL keeps the rules whatever writes the row: a pending request has no decision; a
    decided one has its decider and its time; an approved one the id of what it made (the
    adjustment, the waived fee); and **the decider is never the requester**."""

    class Kind(models.TextChoices):
        ADJUSTMENT = "adjustment"
        FEE_WAIVER = "fee_waiver", "fee waiver"
        OVERDRAFT_RAISE = "overdraft_raise", "overdraft limit raise"
        CARD_LIMITS_RAISE = "card_limits_raise", "card limits raise"
        PIN_UNBLOCK = "pin_unblock", "PIN unblock"

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    id = models.CharField(
        primary_key=True, max_length=40, default=_approval_request_id, editable=False
    )
    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    # The account of an adjustment or an overdraft raise, the fee of a waiver, the card of a
    # limits raise or a PIN unblock.
    target_id = models.CharField(max_length=40)
    # What the real service is called with besides its target: an adjustment's direction,
    # amount, currency and description; an overdraft raise's `overdraft_limit`; a limits
    # raise's `limits` (the changed ones, by their field names); nothing for a waiver or a PIN
    # unblock (the reason is `request_reason`).
    parameters = models.JSONField(default=dict, blank=True)
    # None for a PIN unblock (it moves no amount).
    amount = models.BigIntegerField(null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    request_reason = models.CharField(max_length=500)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    decision_reason = models.CharField(max_length=500, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # What the approval made: the adjustment's id, the waived fee's id, the account or card
    # changed, the PIN unblock's id.
    result_id = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "approval request"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    kind__in=[
                        "adjustment",
                        "fee_waiver",
                        "overdraft_raise",
                        "card_limits_raise",
                        "pin_unblock",
                    ]
                ),
                name="approval_kind_known",
            ),
            # Every change but a PIN unblock is an amount of a currency.
            models.CheckConstraint(
                condition=(Q(kind="pin_unblock", amount__isnull=True, currency=""))
                | (~Q(kind="pin_unblock") & Q(amount__gt=0) & ~Q(currency="")),
                name="approval_amount_positive",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status="pending", decided_by__isnull=True, decided_at__isnull=True)
                    & Q(decision_reason="")
                )
                | Q(
                    status__in=["approved", "rejected"],
                    decided_by__isnull=False,
                    decided_at__isnull=False,
                ),
                name="approval_decided_has_decider",
            ),
            # Four eyes: nobody decides their own request.
            models.CheckConstraint(
                condition=Q(decided_by__isnull=True) | ~Q(decided_by=F("requested_by")),
                name="approval_decider_not_requester",
            ),
            models.CheckConstraint(
                condition=(Q(status="approved") & ~Q(result_id=""))
                | (~Q(status="approved") & Q(result_id="")),
                name="approval_result_when_approved",
            ),
            # One waiver of a fee, one overdraft raise of an account, one limits raise or PIN
            # unblock of a card waits at a time (adjustments add up: several may wait).
            models.UniqueConstraint(
                fields=["kind", "target_id"],
                condition=Q(status="pending") & ~Q(kind="adjustment"),
                name="approval_one_pending_per_target",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "status", "-id"], name="approval_status_idx"),
            # The requests about an account or a fee (the admin's exact-id search).
            models.Index(fields=["target_id", "-id"], name="approval_target_idx"),
            # The dashboard's queue: pending requests, across the user's institutions.
            models.Index(
                fields=["institution", "-id"],
                condition=Q(status="pending"),
                name="approval_pending_idx",
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.get_kind_display()} of {self.target_id} ({self.status})"


class ApprovalThreshold(Timestamped):
    """Up to where one staff user of an institution acts alone (docs/back-office.md, "Four
    eyes"): a change of `kind` measured at most `up_to` (minor units of `currency`) is made at
    once; above it, or where the institution has no threshold for the kind and currency, it
    waits for a second staff user. For a PIN unblock `up_to` counts unblocks instead: the
    unblocks of the card's chain in the rolling window of the API's cap
    (`cards.services.pin.UNBLOCK_WINDOW`) below which one user unblocks alone.

    Set by the bank's administrators (superusers): no staff role may change one."""

    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.PROTECT, related_name="+"
    )
    kind = models.CharField(max_length=32, choices=ApprovalRequest.Kind.choices)
    # Blank for a PIN unblock.
    currency = models.CharField(max_length=3, blank=True)
    up_to = models.BigIntegerField(
        help_text="Minor units of the currency (1050 is 10.50 EUR); for a PIN unblock, "
        "unblocks of the card in the last 30 days."
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "approval threshold"
        ordering = ["institution", "kind", "currency"]
        constraints = [
            models.UniqueConstraint(
                fields=["institution", "kind", "currency"], name="approval_threshold_unique"
            ),
            models.CheckConstraint(
                condition=Q(up_to__gte=0), name="approval_threshold_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(kind="pin_unblock", currency="")
                | (~Q(kind="pin_unblock") & Q(currency__regex=r"^[A-Z]{3}$")),
                name="approval_threshold_currency",
            ),
        ]

    def __str__(self):
        if self.kind == ApprovalRequest.Kind.PIN_UNBLOCK:
            return f"{self.get_kind_display()}: {self.up_to} a card alone"
        return f"{self.get_kind_display()} up to {self.up_to} {self.currency}"


def _staff_event_id():
    return new_id("sev")


class StaffEvent(models.Model):
    """A security event of a staff account (docs/back-office.md, "Staff events"): an enrolment
    token issued, a second factor enrolled or reset, recovery codes renewed, card numbers
    guessed in the search. Not an event of the `events` app: those are an institution's outbox,
    delivered to its webhooks, and a staff account belongs to no institution. Written in the
    transaction of the change it records (`backoffice.staff_events`), never changed after."""

    class Type(models.TextChoices):
        ENROLMENT_TOKEN_ISSUED = "staff.enrolment_token_issued", "enrolment token issued"
        SECOND_FACTOR_ENROLLED = "staff.second_factor_enrolled", "second factor enrolled"
        SECOND_FACTOR_RESET = "staff.second_factor_reset", "second factor reset"
        RECOVERY_CODES_RENEWED = "staff.recovery_codes_renewed", "recovery codes renewed"
        PAN_GUESSING_SUSPECTED = "security.pan_guessing_suspected", "card numbers guessed"

    id = models.CharField(primary_key=True, max_length=40, default=_staff_event_id, editable=False)
    type = models.CharField(max_length=64, choices=Type.choices)
    # Whose account the event is about.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # Who did it: the user themselves, another staff user (a reset), or nobody (a command run
    # by an operator without a staff account: `by` is then null and `data` says who ran it).
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "staff event"
        ordering = ["-id"]
        indexes = [models.Index(fields=["user", "-id"], name="staff_event_user_idx")]

    def __str__(self):
        return f"{self.get_type_display()}: {self.user} ({self.created_at:%Y-%m-%d %H:%M:%S})"
