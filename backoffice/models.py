"""The back office's own records: the sign-in lockouts of staff usernames (backoffice.lockouts),
the approval requests of the four-eyes flow (backoffice.services.approvals), staff security
events, and the staff's second factor (backoffice.second_factor): their authenticator apps,
recovery codes and enrolment tokens, none of them readable from the database alone."""

import hmac
import time
from base64 import b32encode
from binascii import unhexlify
from urllib.parse import quote, urlencode

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import connection, models
from django.db.models import F, Q
from django.utils import timezone
from django_otp.models import Device, ThrottlingMixin, TimestampMixin
from django_otp.oath import TOTP

from backoffice import secrets
from core import crypto
from core.ids import new_id
from core.models import Timestamped
from events.models import ActorType, Event


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
        # An inbound ACH credit in suspense, applied to an account or returned (docs/payments.md).
        INBOUND_APPLY = "inbound_apply", "inbound credit applied from suspense"
        INBOUND_RETURN = "inbound_return", "inbound credit returned from suspense"
        # A reconciliation break's resolution that books the bank's money (docs/reconciliation.md,
        # "Breaks"): a bank-only credit to suspense, a bank fee.
        BREAK_CREDIT = "break_credit", "bank-only credit booked to suspense"
        BREAK_FEE = "break_fee", "bank fee booked"
        # A network-only break's late presentment cleared by TX (docs/reconciliation.md, "Force
        # post of a late presentment").
        BREAK_FORCE_POST = "break_force_post", "late presentment force posted"
        # A bank-only credit booked to suspense, placed on a customer account.
        BREAK_PLACE = "break_place", "bank-only credit placed from suspense"

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
    # limits raise or a PIN unblock, the inbound entry applied or returned from suspense, the
    # reconciliation break booked.
    target_id = models.CharField(max_length=40)
    # What the real service is called with besides its target: an adjustment's direction,
    # amount, currency and description; an overdraft raise's `overdraft_limit`; a limits
    # raise's `limits` (the changed ones, by their field names); an inbound credit's or a
    # break's credit's `account_id` (applied, placed) or return `code` (returned); nothing for a
    # waiver or a PIN unblock (the reason is `request_reason`).
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
                        "inbound_apply",
                        "inbound_return",
                        "break_credit",
                        "break_fee",
                        "break_force_post",
                        "break_place",
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
    # What one staff user does alone in 24 hours, every target together (the sum of their
    # alone-made adjustments or waived fees in the currency; their alone-made PIN unblocks).
    # NULL: the same as `up_to`. A limit raise is measured by the limit it sets, which slicing
    # cannot raise: it has no daily total (NULL, a CHECK).
    daily_up_to = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Per staff user in 24 hours, every account or card together; blank: the same "
        "as one change's.",
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
                condition=Q(up_to__gte=0) & (Q(daily_up_to__isnull=True) | Q(daily_up_to__gte=0)),
                name="approval_threshold_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(daily_up_to__isnull=True)
                | ~Q(kind__in=["overdraft_raise", "card_limits_raise"]),
                name="approval_threshold_daily_of_sums",
            ),
            models.CheckConstraint(
                condition=Q(kind="pin_unblock", currency="")
                | (~Q(kind="pin_unblock") & Q(currency__regex=r"^[A-Z]{3}$")),
                name="approval_threshold_currency",
            ),
            # Money placed from suspense, and a break's money booked or force posted, always
            # takes two people: no threshold for it.
            models.CheckConstraint(
                condition=~Q(
                    kind__in=[
                        "inbound_apply",
                        "inbound_return",
                        "break_credit",
                        "break_fee",
                        "break_force_post",
                        "break_place",
                    ]
                ),
                name="approval_threshold_not_of_suspense",
            ),
        ]

    def __str__(self):
        if self.kind == ApprovalRequest.Kind.PIN_UNBLOCK:
            return f"{self.get_kind_display()}: {self.up_to} a card alone"
        return f"{self.get_kind_display()} up to {self.up_to} {self.currency}"


class AloneChange(models.Model):
    """A change a staff user made alone, within the institution's thresholds (no second
    person): what the four-eyes sums count (`backoffice.services.staff_changes`). A change
    is made alone only while the same user's alone-made changes of its kind to its target
    over the last 24 hours, it included, stay within the threshold, and every target
    together within the daily total; several alone-made changes to one account raise a
    monitoring alert. Written in the change's transaction; never changed."""

    id = models.BigAutoField(primary_key=True)
    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=32, choices=ApprovalRequest.Kind.choices)
    # The account (an adjustment, a fee waiver, an overdraft raise) or the card (limits, a PIN
    # unblock) changed.
    target_id = models.CharField(max_length=40)
    # What the change is measured by (`ApprovalRequest.amount`); none for a PIN unblock.
    amount = models.BigIntegerField(null=True, blank=True)
    currency = models.CharField(max_length=3, blank=True)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # What the change made: the adjustment, the waived fee, the account or card, the unblock.
    made_id = models.CharField(max_length=40)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "change made alone"
        verbose_name_plural = "changes made alone"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="pin_unblock", amount__isnull=True, currency="")
                | (~Q(kind="pin_unblock") & Q(amount__gt=0) & ~Q(currency="")),
                name="alone_change_amount_positive",
            ),
        ]
        indexes = [
            # A user's sums: of a kind to a target, of a kind in a currency.
            models.Index(fields=["made_by", "kind", "created_at"], name="alone_change_user_idx"),
            # An account's alone-made changes, whoever made them (the alert).
            models.Index(fields=["target_id", "created_at"], name="alone_change_target_idx"),
        ]

    def __str__(self):
        return f"{self.get_kind_display()} of {self.target_id} by {self.made_by_id}"


def _staff_event_id():
    return new_id("sev")


class StaffEvent(models.Model):
    """A security event of a staff account (docs/back-office.md, "Staff events"): an enrolment
    token issued, a second factor enrolled or reset, recovery codes renewed, card numbers
    guessed in the search, a list exported. Not an event of the `events` app: those are an
    institution's outbox, delivered to its webhooks, and a staff account belongs to no
    institution. Written in the transaction of the change it records (`backoffice.staff_events`),
    never changed after."""

    class Type(models.TextChoices):
        ENROLMENT_TOKEN_ISSUED = "staff.enrolment_token_issued", "enrolment token issued"
        SECOND_FACTOR_ENROLLED = "staff.second_factor_enrolled", "second factor enrolled"
        SECOND_FACTOR_RESET = "staff.second_factor_reset", "second factor reset"
        RECOVERY_CODES_RENEWED = "staff.recovery_codes_renewed", "recovery codes renewed"
        PAN_GUESSING_SUSPECTED = "security.pan_guessing_suspected", "card numbers guessed"
        # A list of the back office downloaded as CSV (`backoffice.exports`): which list, its
        # filters and search, how many rows.
        LIST_EXPORTED = "staff.list_exported", "list exported"

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


class StaffActivityManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(actor_type=ActorType.STAFF)


class StaffActivity(Event):
    """The audit page (docs/back-office.md, "The audit page"): the events whose actor is a
    staff user, every staff action's and every approval's (requested, approved, rejected), each
    with its institution, its object and the journal it posted (`backoffice.audit`). A proxy:
    the events are the record, written by the services in the transaction of the change;
    nothing is copied."""

    objects = StaffActivityManager()

    class Meta:
        proxy = True
        verbose_name = "staff action"
        verbose_name_plural = "audit: staff actions and approvals"
        default_permissions = ("view",)


# --- Case work (backoffice.services.cases, docs/back-office.md "Case work") ----------------------
def _case_note_id():
    return new_id("note")


class Case(models.Model):
    """The case work on one row staff investigate: a dispute, a monitoring alert (and the
    reconciliation breaks when they land), keyed by the row itself (its content type and id),
    so a new kind of case needs no column and no table of its own. Made with the first note or
    assignment (`backoffice.services.cases`); a row nobody worked on has none. `assignee` is
    who works on it now (None: nobody); each assignment is also an event of the row and a line
    of its admin history, with who made it."""

    id = models.BigAutoField(primary_key=True)
    institution = models.ForeignKey(
        "institutions.Institution", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT, related_name="+")
    # Every object of TX has an opaque id of at most 40 characters (`core.ids`).
    object_id = models.CharField(max_length=40)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    assigned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "case"
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "object_id"], name="case_object_unique"
            ),
            # Assigned once: by whom and when (even to nobody, which is an assignment too).
            models.CheckConstraint(
                condition=Q(assigned_at__isnull=True, assignee__isnull=True)
                | Q(assigned_at__isnull=False, assigned_by__isnull=False),
                name="case_assignment_complete",
            ),
        ]
        indexes = [
            # The "mine" queues: a user's cases of one kind.
            models.Index(
                fields=["assignee", "content_type"],
                condition=Q(assignee__isnull=False),
                name="case_assignee_idx",
            ),
        ]

    def __str__(self):
        return f"case of {self.object_id}"


class CaseNote(models.Model):
    """A staff user's note on a case: never changed or deleted once written, never holding a
    card or account number (`core.text`, checked by the service and the form)."""

    MAX_LENGTH = 2000

    id = models.CharField(primary_key=True, max_length=40, default=_case_note_id, editable=False)
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.CharField(max_length=MAX_LENGTH)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "case note"
        ordering = ["-id"]
        constraints = [models.CheckConstraint(condition=~Q(text=""), name="case_note_text")]

    def __str__(self):
        return f"note {self.id} by {self.author_id}"


# --- The second factor (backoffice.second_factor, docs/back-office.md "Signing in") -----------
# django-otp's own TOTP and static devices keep the seed in hex and the recovery codes as typed:
# these are built on its `Device` base instead (with its throttling), so its session marking
# (`django_otp.login`, `request.user.is_verified()`, `persistent_id`) works as before.

# After a device's n-th wrong code in a row, none is checked for 2^(n-1) seconds.
THROTTLE_FACTOR = 1


def app_key_context(device_id: int) -> str:
    """The associated data of an authenticator app's encrypted key: its column and its row."""
    return f"backoffice.AppDevice.key:{device_id}"


class AppDevice(TimestampMixin, ThrottlingMixin, Device):
    """A staff user's authenticator app: TOTP (RFC 6238), 6 digits every 30 seconds, the codes
    of the step before and after accepted too, each step's code once.

    The key (the seed the QR code carries) is stored encrypted with the field keys
    (`core.crypto`, AES-GCM), bound to this row's id and column: `key_encrypted` copied to
    another row does not decrypt. It is decrypted in memory only, to check a code or to show it
    once at enrolment, and re-encrypted under a new key by `reencrypt_sensitive_data`.

    PostgreSQL keeps at most one confirmed app per user and at most one waiting for its first
    code (an enrolment in progress: a new one replaces it)."""

    # What an authenticator app assumes from an otpauth:// URI: the same for every device.
    step = 30
    t0 = 0
    digits = 6
    tolerance = 1

    key_encrypted = models.TextField(editable=False)
    drift = models.SmallIntegerField(default=0)
    # The step of the last code accepted: a code is accepted once, and never an older one.
    last_t = models.BigIntegerField(default=-1)

    class Meta:
        verbose_name = "authenticator app"
        constraints = [
            models.UniqueConstraint(
                fields=["user"], condition=Q(confirmed=True), name="app_device_one_confirmed"
            ),
            models.UniqueConstraint(
                fields=["user"], condition=Q(confirmed=False), name="app_device_one_pending"
            ),
        ]

    @classmethod
    def create(cls, *, user, confirmed: bool) -> "AppDevice":
        """A new device with a new random key. Its id is taken from the table's sequence
        before the insert, so that the key is sealed to it in the same statement."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [cls._meta.db_table])
            (device_id,) = cursor.fetchone()
        device = cls(id=device_id, user=user, name="Authenticator app", confirmed=confirmed)
        device.seal(secrets.app_key_new())
        device.save(force_insert=True)
        return device

    def seal(self, key_hex: str) -> None:
        """Encrypt the key (hex) under the newest field key, bound to this device."""
        self.key_encrypted = crypto.encrypt(key_hex, context=self._context())

    def key_hex(self) -> str:
        return crypto.decrypt(self.key_encrypted, context=self._context())

    @property
    def bin_key(self) -> bytes:
        return unhexlify(self.key_hex())

    @property
    def config_url(self) -> str:
        """The otpauth:// URI the enrolment page's QR code carries (Google's Key Uri Format;
        the issuer `OTP_TOTP_ISSUER`), as django-otp's TOTP device writes it."""
        issuer = settings.OTP_TOTP_ISSUER.replace(":", "")
        label = f"{issuer}:{self.user.get_username()}"
        parameters = urlencode(
            {
                "secret": b32encode(self.bin_key),
                "algorithm": "SHA1",
                "digits": self.digits,
                "period": self.step,
            }
        )
        return f"otpauth://totp/{quote(label)}?{parameters}&issuer={quote(issuer)}"

    def get_throttle_factor(self) -> int:
        return THROTTLE_FACTOR

    def verify_token(self, token) -> bool:
        """Whether `token` is the app's code now (within one step either way) and newer than the
        last one accepted; django-otp's TOTP check, with the key decrypted for it. A right code
        resets the throttle and moves `last_t`; a wrong one counts towards the throttle."""
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        try:
            code = int(token)
        except (TypeError, ValueError):
            verified = False
        else:
            totp = TOTP(self.bin_key, self.step, self.t0, self.digits, self.drift)
            totp.time = time.time()
            verified = totp.verify(code, self.tolerance, self.last_t + 1)
        if not verified:
            self.throttle_increment(commit=True)
            return False
        self.last_t = totp.t()
        self.drift = totp.drift
        self.throttle_reset(commit=False)
        self.set_last_used_timestamp(commit=False)
        self.save()
        return True

    def _context(self) -> str:
        return app_key_context(self.id)


class RecoveryCodeDevice(TimestampMixin, ThrottlingMixin, Device):
    """A staff user's recovery codes (`RecoveryCode`, each used once), one device per user:
    renewing replaces its codes and keeps the device, so a session it verified stays so."""

    class Meta:
        verbose_name = "recovery codes"
        verbose_name_plural = "recovery codes"
        constraints = [models.UniqueConstraint(fields=["user"], name="recovery_codes_one")]

    def get_throttle_factor(self) -> int:
        return THROTTLE_FACTOR

    def verify_token(self, token) -> bool:
        """Whether `token` is one of the unused codes; that code is used up. Every stored code
        is compared whether or not one matched before it: the time taken does not tell which."""
        allowed, _ = self.verify_is_allowed()
        if not allowed:
            return False
        match = None
        for code in self.codes.all():
            if code.matches(str(token)) and match is None:
                match = code
        if match is None:
            self.throttle_increment(commit=True)
            return False
        match.delete()
        self.throttle_reset(commit=False)
        self.set_last_used_timestamp(commit=False)
        self.save()
        return True


class RecoveryCode(models.Model):
    """One recovery code, as a salted keyed hash (`backoffice.secrets`): never the code."""

    device = models.ForeignKey(RecoveryCodeDevice, on_delete=models.CASCADE, related_name="codes")
    salt = models.CharField(max_length=32)
    digest = models.CharField(max_length=64)

    class Meta:
        verbose_name = "recovery code"

    def __str__(self):
        return f"recovery code {self.pk}"

    @classmethod
    def of(cls, *, device: RecoveryCodeDevice, code: str) -> "RecoveryCode":
        salt, digest = secrets.recovery_code_hash(code)
        return cls(device=device, salt=salt, digest=digest)

    def matches(self, code: str) -> bool:
        return secrets.recovery_code_matches(code, salt=self.salt, digest=self.digest)


class EnrolmentToken(models.Model):
    """A one-time token that lets a staff user enrol an authenticator app: issued by
    `create_staff_user` or `reset_second_factor`, handed over out of band, asked for with the
    password at sign-in, used up when the app is confirmed. Stored as its hash
    (`backoffice.secrets`). It is open until used, voided (by a newer token) or expired.

    PostgreSQL keeps at most one open (neither used nor voided) token per user."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)
    # The superuser who issued it (a reset), or null (`create_staff_user`, an operator).
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "enrolment token"
        constraints = [
            models.UniqueConstraint(
                fields=["user"],
                condition=Q(used_at__isnull=True, voided_at__isnull=True),
                name="enrolment_token_one_open",
            ),
            models.CheckConstraint(
                condition=Q(used_at__isnull=True) | Q(voided_at__isnull=True),
                name="enrolment_token_used_or_voided",
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("created_at")),
                name="enrolment_token_expires_after_issue",
            ),
        ]

    def __str__(self):
        return f"enrolment token {self.pk} of {self.user}"

    def is_live(self) -> bool:
        return self.used_at is None and self.voided_at is None and timezone.now() < self.expires_at

    def matches(self, token: str) -> bool:
        return hmac.compare_digest(secrets.enrolment_token_digest(token), self.digest)
