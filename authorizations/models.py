"""The card network's side: authorizations, their clearing, and merchant returns.

An authorization is the network asking whether a card may pay. Approved, it holds the amount
on the card's account (a hold of purpose `card_authorization`) and writes an `Unsettled`
statement line; declined, it records the decline code and moves nothing. Its later life is its
hold's: captured by a presentment (the line becomes `Presentment`), released by a reversal, or
expired by the expiry job. A return (merchant refund) credits the account at once.
"""

from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Account, Hold, Journal
from cards.models import Card
from core.ids import new_id
from core.metadata import MetadataField
from core.models import CreatedBy, Timestamped
from core.money import decimal_text, money
from institutions.models import Institution


def _authorization_id():
    return new_id("auth")


def _return_id():
    return new_id("cret")


def _increment_id():
    return new_id("ainc")


class Channel(models.TextChoices):
    POS = "pos"
    ECOMMERCE = "ecommerce"
    ATM = "atm"
    CONTACTLESS = "contactless"


class Merchant(models.Model):
    """Abstract: the merchant fields an authorization and a return carry."""

    merchant_name = models.CharField(max_length=100)
    merchant_mcc = models.CharField(max_length=4)
    merchant_country = models.CharField(max_length=3)
    channel = models.CharField(max_length=16, choices=Channel.choices)

    class Meta:
        abstract = True

    @staticmethod
    def merchant_fields(merchant: dict) -> dict:
        """The model's fields of `merchant` ({name, mcc, country_code, channel}), the inverse
        of `merchant`."""
        return {
            "merchant_name": merchant["name"],
            "merchant_mcc": merchant["mcc"],
            "merchant_country": merchant["country_code"],
            "channel": merchant["channel"],
        }

    @property
    def merchant(self) -> dict:
        return {
            "name": self.merchant_name,
            "mcc": self.merchant_mcc,
            "country_code": self.merchant_country,
            "channel": self.channel,
        }


class ProgramDecided(models.Model):
    """Abstract: a decision on what the card network asks, and what the program's decisioning
    endpoint had to do with it (docs/decisioning.md, "The record"). An authorization's, and an
    incremental authorization's (`AuthorizationIncrement`): each is decided by TX's checks
    and then, when the card has an endpoint, by its program."""

    class Decision(models.TextChoices):
        APPROVED = "approved"
        DECLINED = "declined"
        # TX's checks passed and the hold is placed; the program's endpoint is being asked
        # (docs/decisioning.md, "The flow"). Never for long: the request finalizes it, or the
        # recovery job by the endpoint's `on_failure`.
        AWAITING_PROGRAM = "awaiting_program"

    class DecidedBy(models.TextChoices):
        TX = "tx"  # TX's own checks, with no program asked (or a shadow program)
        PROGRAM = "program"  # the program's live answer
        STANDIN = "standin"  # the program failed to answer: its endpoint's `on_failure`
        NETWORK = "network"  # the network decided in stand-in (an advice)

    decision = models.CharField(max_length=16, choices=Decision.choices)
    decline_code = models.CharField(max_length=48, blank=True)
    decline_reason = models.CharField(max_length=300, blank=True)
    decline_details = models.JSONField(null=True, blank=True)
    decided_by = models.CharField(
        max_length=16, choices=DecidedBy.choices, default=DecidedBy.TX, db_default=DecidedBy.TX
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # The program's endpoint asked (live or shadow), and what came of it: the latency of the
    # call, its HTTP status, why it failed (a few words, never the URL), its valid answer.
    decisioning_endpoint = models.ForeignKey(
        "decisioning.DecisioningEndpoint",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    program_mode = models.CharField(max_length=16, blank=True)
    program_latency_ms = models.IntegerField(null=True, blank=True)
    program_status = models.IntegerField(null=True, blank=True)
    program_error = models.CharField(max_length=300, blank=True)
    program_answer = models.JSONField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def decline_code_or_none(self) -> str | None:
        return self.decline_code or None

    @property
    def decline_reason_or_none(self) -> str | None:
        return self.decline_reason or None

    @property
    def approved(self) -> bool:
        return self.decision == self.Decision.APPROVED

    @property
    def awaiting_program(self) -> bool:
        return self.decision == self.Decision.AWAITING_PROGRAM

    @property
    def program_error_or_none(self) -> str | None:
        return self.program_error or None

    @property
    def program_call(self):
        """Itself when a program's endpoint took part (the API's `program`), else None."""
        return self if self.decisioning_endpoint_id else None


class Authorization(Merchant, ProgramDecided, CreatedBy, Timestamped):
    class Type(models.TextChoices):
        GOODS = "Goods"
        CASH = "Cash"

    class Kind(models.TextChoices):
        # The network asks (docs/card-transactions.md): TX's checks, then the program, decide.
        REQUEST = "request"
        # The network approved it in stand-in and tells the issuer: recorded and held as
        # approved, never declined.
        ADVICE = "advice"
        # A presentment with no live authorization: recorded and presented at once, never
        # declined.
        FORCE_POST = "force_post"

    class Status(models.TextChoices):
        PENDING = "pending", "Approved, awaiting presentment"
        PRESENTED = "presented"
        REVERSED = "reversed"
        EXPIRED = "expired"
        DECLINED = "declined"
        AWAITING_PROGRAM = "awaiting_program", "Held, the program deciding"

    # hold status -> the status of an approved authorization
    _STATUS_OF_HOLD = {
        Hold.Status.ACTIVE: Status.PENDING,
        Hold.Status.CAPTURED: Status.PRESENTED,
        Hold.Status.RELEASED: Status.REVERSED,
        Hold.Status.EXPIRED: Status.EXPIRED,
    }

    id = models.CharField(
        primary_key=True, max_length=40, default=_authorization_id, editable=False
    )
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="authorizations")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    type = models.CharField(max_length=8, choices=Type.choices)
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    pin_given = models.BooleanField(default=False)
    # The merchant takes less than asked (the network's partial-approval indicator): only then
    # may TX or the program approve less (docs/decisioning.md, "Partial approvals").
    partial_approval = models.BooleanField(default=False, db_default=False)
    hold = models.OneToOneField(
        Hold, on_delete=models.PROTECT, null=True, blank=True, related_name="authorization"
    )
    presented_amount = models.BigIntegerField(null=True, blank=True)
    presented_at = models.DateTimeField(null=True, blank=True)
    # What its returns credited back, and what its disputes contest (docs/disputes.md, "What
    # may be disputed"): together never more than was presented, a CHECK below.
    returned_amount = models.BigIntegerField(default=0, db_default=0)
    disputed_amount = models.BigIntegerField(default=0, db_default=0)
    # The calendar day its amount counts on against the card's limits (given back on reversal).
    spend_day = models.DateField(null=True, blank=True)
    # The amount the network asked for, when less was approved (a partial approval); null when
    # `amount` is what was asked.
    requested_amount = models.BigIntegerField(null=True, blank=True)
    # --- Foreign currency (docs/card-transactions.md, "Foreign currency"): what the merchant
    # charged, in its currency, when the network sent it; `amount`/`currency` are the billing
    # amount. The rate is derived from the two (authorizations.services.currency), null when
    # nothing was converted.
    merchant_amount = models.BigIntegerField(null=True, blank=True)
    merchant_currency = models.CharField(max_length=3, null=True, blank=True)
    conversion_rate = models.DecimalField(max_digits=40, decimal_places=20, null=True, blank=True)
    # The network's message (docs/card-transactions.md, "Messages the network does not ask"),
    # and what an advice or a force post took the account beyond its available balance (the
    # flag: the account's `network_overdraft` rose by as much); 0 when it was covered.
    kind = models.CharField(
        max_length=16, choices=Kind.choices, default=Kind.REQUEST, db_default=Kind.REQUEST
    )
    overdrawn_by = models.BigIntegerField(default=0, db_default=0)
    # Just-in-time funding (docs/decisioning.md): what the program's funding account moved to
    # the account for this payment, and what came back to it. What it still funds is what the
    # payment still needs: held now, plus presented, less returned (`program_funding_follow`,
    # checked by verify_ledger). 0 and 0 but for an authorization its JIT program approved.
    program_funded = models.BigIntegerField(default=0, db_default=0)
    program_defunded = models.BigIntegerField(default=0, db_default=0)
    # The client's own key-value pairs (core.metadata, docs/metadata.md).
    metadata = MetadataField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        verbose_name = "card authorization"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="authorization_amount_positive"),
            # What the network did not ask is approved, by the network; only it overdraws.
            # ... and a JIT program's `on_failure: approve`, which forces the hold it funds not
            # (docs/decisioning.md, "Just-in-time funding").
            models.CheckConstraint(
                condition=Q(kind="request", overdrawn_by=0)
                | Q(kind="request", decided_by="standin", program_mode="jit", overdrawn_by__gte=0)
                | Q(
                    kind__in=["advice", "force_post"],
                    decision="approved",
                    decided_by="network",
                    overdrawn_by__gte=0,
                ),
                name="authorization_network_message_approved_v2",
            ),
            # Approved and awaiting the program: a hold, no decline code (awaiting a JIT
            # program: no hold yet, nothing is funded until it approves). Declined: a code, and
            # no hold unless the program declined after TX held (a released hold, kept linked).
            models.CheckConstraint(
                condition=(
                    Q(decision__in=["approved", "awaiting_program"])
                    & Q(hold__isnull=False)
                    & Q(decline_code="")
                )
                | Q(decision="awaiting_program", program_mode="jit", decline_code="")
                | (Q(decision="declined") & ~Q(decline_code="")),
                name="authorization_decision_consistent_v3",
            ),
            # What came back to the program is never more than it funded; only a JIT program
            # funds.
            models.CheckConstraint(
                condition=Q(program_defunded__gte=0, program_defunded__lte=F("program_funded"))
                & (Q(program_funded=0) | Q(program_mode="jit")),
                name="authorization_program_funding_valid",
            ),
            models.CheckConstraint(
                condition=Q(requested_amount__isnull=True) | Q(requested_amount__gt=F("amount")),
                name="authorization_partial_below_requested",
            ),
            # Returns and disputes of a presentment never give back more than was presented.
            models.CheckConstraint(
                condition=Q(returned_amount__gte=0, disputed_amount__gte=0)
                & Q(returned_amount__lte=Coalesce(F("presented_amount"), 0) - F("disputed_amount")),
                name="authorization_returned_and_disputed_at_most_presented",
            ),
            # The merchant's amount and currency come together, or not at all.
            models.CheckConstraint(
                condition=Q(merchant_amount__isnull=True, merchant_currency__isnull=True)
                | Q(merchant_amount__isnull=False, merchant_currency__isnull=False),
                name="authorization_merchant_amount_pair",
            ),
            models.CheckConstraint(
                condition=Q(merchant_amount__isnull=True) | Q(merchant_amount__gt=0),
                name="authorization_merchant_amount_positive",
            ),
            # A rate only where the merchant's currency is not the billing one.
            models.CheckConstraint(
                condition=Q(conversion_rate__isnull=True)
                | (
                    Q(conversion_rate__gt=0, merchant_currency__isnull=False)
                    & ~Q(merchant_currency=F("currency"))
                ),
                name="authorization_conversion_rate_foreign",
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "-id"], name="authorization_institution_idx"),
            models.Index(fields=["card", "-id"], name="authorization_card_idx"),
            # GET /card-authorizations?status=declined, newest first (the other statuses are
            # their hold's: accounts' hold_card_auth_status_idx).
            models.Index(
                fields=["institution", "-id"],
                condition=Q(decision="declined"),
                name="authorization_declined_idx",
            ),
            # The recovery job's scan (`authorizations_resolve_stranded`): only the few rows a
            # request is deciding right now, or left behind when its process died.
            models.Index(
                fields=["created_at"],
                condition=Q(decision="awaiting_program"),
                name="authorization_awaiting_idx",
            ),
        ]

    def __str__(self):
        return f"{self.id} {money(self.amount, self.currency)} ({self.status})"

    @property
    def conversion_rate_text(self) -> str | None:
        return decimal_text(self.conversion_rate)

    @property
    def program_funding(self):
        """Itself when its JIT program funded it (the API's `programFunding`), else None."""
        return self if self.program_funded else None

    @property
    def requested_amount_or_amount(self) -> int:
        return self.amount if self.requested_amount is None else self.requested_amount

    @property
    def status(self) -> str:
        if self.awaiting_program:
            return self.Status.AWAITING_PROGRAM
        if not self.approved:
            return self.Status.DECLINED
        return self._STATUS_OF_HOLD[self.hold.status]


class CardReturn(Merchant, CreatedBy):
    """A merchant refund: credits the card's account at once (a `Return` line, `Presentment`),
    from the institution's card-clearing account."""

    id = models.CharField(primary_key=True, max_length=40, default=_return_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="returns")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    authorization = models.ForeignKey(
        Authorization, on_delete=models.PROTECT, null=True, blank=True, related_name="returns"
    )
    amount = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    journal = models.OneToOneField(Journal, on_delete=models.PROTECT, related_name="card_return")
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="card_return_amount_positive"),
        ]
        indexes = [models.Index(fields=["card", "-id"], name="card_return_card_idx")]

    def __str__(self):
        return f"{self.id} {money(self.amount, self.currency)}"


class AuthorizationIncrement(ProgramDecided, CreatedBy):
    """The network raising a pending authorization (a hotel, a fuel pump, a car rental): `amount`
    more, checked like a new authorization (docs/card-transactions.md, "Incremental
    authorizations"): TX's checks, then the card's program when it has a decisioning endpoint.
    Approved, the authorization's `amount` grows by it and `hold` is the hold of the new total
    that replaced the authorization's. Awaiting its program, that hold is already placed (the
    authorization's from then) while the authorization's amount and line stay as they were.
    Declined by TX's checks, nothing changes but this record; declined after it was held, `hold`
    is that hold, released, and the authorization holds its old total again."""

    id = models.CharField(primary_key=True, max_length=40, default=_increment_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="+")
    authorization = models.ForeignKey(
        Authorization, on_delete=models.PROTECT, related_name="increments"
    )
    amount = models.BigIntegerField()
    hold = models.OneToOneField(
        Hold, on_delete=models.PROTECT, null=True, blank=True, related_name="increment"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__gt=0), name="authorization_increment_amount_positive"
            ),
            # Approved and awaiting the program: a hold, no decline code. Declined: a code, and
            # no hold unless it was declined after TX held (that hold, released, kept linked).
            models.CheckConstraint(
                condition=(
                    Q(decision__in=["approved", "awaiting_program"])
                    & Q(hold__isnull=False)
                    & Q(decline_code="")
                )
                | Q(decision="awaiting_program", program_mode="jit", decline_code="")
                | (Q(decision="declined") & ~Q(decline_code="")),
                name="authorization_increment_decision_consistent_v3",
            ),
        ]
        indexes = [
            models.Index(fields=["authorization", "id"], name="authorization_increment_idx"),
            # The recovery job's scan, and the refusal of other messages while one awaits:
            # only the few increments a request is deciding right now, or left behind.
            models.Index(
                fields=["created_at"],
                condition=Q(decision="awaiting_program"),
                name="increment_awaiting_idx",
            ),
        ]

    def __str__(self):
        amount = money(self.amount, self.authorization.currency)
        return f"{self.id} +{amount} ({self.decline_code or self.decision})"
