"""`/card-authorizations` (the card network's side, also the sandbox simulator): decide,
read, present, reverse; `/card-returns`: merchant refunds. Identical in both versions but for
the client's `metadata` on authorizations, v2 only, set on create (docs/metadata.md), and the
merchant's amount in its currency (`merchantAmount`, `merchantCurrency`, `conversionRate`), v2
only (docs/card-transactions.md, "Foreign currency").

A decline is a result, not an error: 201 (v1: 200) with `approved: false` and a `declineCode`
from `authorizations.declines`.

v2 only, the network's other messages (docs/card-transactions.md): `kind` advice or force_post
on create (recorded, never declined), and `/card-authorizations/{id}/increments` (incremental
authorizations).
"""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import both, document
from api.serializers import (
    AmountField,
    CountryNumericField,
    CurrencyField,
    MetadataField,
    Serializer,
    StoredDataField,
    StoredDataSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V1, V2
from api.views import Continued, TXView
from cards.apis.serializers import MccField, PanField, PinField
from cards.selectors import card_get
from cards.services import card_by_pan
from core.actors import Actor
from core.exceptions import IdempotencyKeyInUse
from decisioning import calls
from decisioning.models import DecisioningEndpoint
from institutions import scopes

from .declines import CODES as DECLINE_CODES
from .models import Authorization, AuthorizationIncrement, Channel
from .selectors import (
    authorization_get,
    authorization_increment_get,
    authorization_increment_list,
    authorization_list,
    card_return_get,
)
from .services import (
    authorization_ask_program,
    authorization_create,
    authorization_decide,
    authorization_increment,
    authorization_present,
    authorization_record_network,
    authorization_reverse,
    card_return_create,
    increment_ask_program,
    increment_decide,
    increment_program_to_ask,
    program_to_ask,
)


class MerchantInput(StrictSerializer):
    name = StrictCharField(max_length=100)
    mcc = MccField(help_text="Merchant category code, 4 digits (ISO 18245).")
    countryCode = CountryNumericField(  # noqa: N815
        source="country_code", help_text="ISO 3166-1 numeric."
    )
    channel = serializers.ChoiceField(choices=Channel.choices)


class CardReference(StrictSerializer):
    """Exactly one of `cardId` or `pan` names the card."""

    cardId = StrictCharField(required=False, max_length=40)  # noqa: N815
    pan = PanField(required=False, help_text="The card number (body only, never a URL).")

    def validate(self, attrs):
        if ("cardId" in attrs) == ("pan" in attrs):
            raise serializers.ValidationError("Give exactly one of cardId or pan.")
        return attrs


class AuthorizationCreate(CardReference):
    amount = AmountField(help_text="Minor units of `currency`.")
    currency = CurrencyField()
    type = serializers.ChoiceField(choices=Authorization.Type.choices)
    merchant = MerchantInput()
    pin = PinField(required=False, help_text="Checked when given; a wrong PIN counts as a try.")


class AuthorizationCreateV2(AuthorizationCreate):
    metadata = MetadataField(required=False)
    merchantAmount = AmountField(  # noqa: N815
        required=False,
        help_text="What the merchant charged, in minor units of `merchantCurrency` (the "
        "network's transaction amount, DE4); `amount` is then the billing amount in the "
        "account's currency (DE6). With `merchantCurrency`, or neither.",
    )
    merchantCurrency = CurrencyField(  # noqa: N815
        required=False, help_text="The merchant's currency (ISO 4217). With `merchantAmount`."
    )
    partialApproval = StrictBooleanField(  # noqa: N815
        required=False,
        help_text="The terminal takes a partial approval (the network's indicator): an "
        "account with less than `amount` available, but more than nothing, is approved for "
        "what it has (`amount` that, `requestedAmount` what was asked) instead of declined "
        "`insufficient_funds`.",
    )
    kind = serializers.ChoiceField(
        choices=Authorization.Kind.choices,
        required=False,
        help_text="Default `request`: the network asks, TX (and the program) decide. `advice`: "
        "the network approved it in stand-in: recorded and held as approved, never declined. "
        "`force_post`: a presentment with no live authorization: recorded and presented at "
        "once, never declined. Both take the account below zero available when it has less "
        "(`overdrawnBy`); neither takes `pin` or `partialApproval`.",
    )

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if attrs.get("kind", Authorization.Kind.REQUEST) != Authorization.Kind.REQUEST:
            given = [name for name in ("pin", "partialApproval") if name in attrs]
            if given:
                raise serializers.ValidationError(
                    {name: f"Not with kind {attrs['kind']}: the network decided." for name in given}
                )
        return attrs


CREATE_INPUT = {V1: AuthorizationCreate, V2: AuthorizationCreateV2}


class PresentmentCreate(StrictSerializer):
    amount = AmountField(
        required=False,
        help_text="Default: what is still held (the authorized amount, unless v2 presentments "
        "that were not final cleared part). Lower: the rest is released. Higher: at most 20% "
        "more in all, with the difference available on the account.",
    )


class PresentmentCreateV2(PresentmentCreate):
    class Meta:
        # v2's document named it PresentmentCreate before `final` came: generated clients keep
        # their model (PresentmentCreateRequest).
        ref_name = "PresentmentCreate"

    final = StrictBooleanField(
        required=False,
        help_text="Default true: the last presentment, the rest released. False (a split "
        "shipment): `amount` (required, below what is still held) is cleared and the rest "
        "stays held for the next presentments.",
    )


PRESENTMENT_INPUT = {V1: PresentmentCreate, V2: PresentmentCreateV2}


class ReversalCreate(StrictSerializer):
    pass


class IncrementCreate(StrictSerializer):
    amount = AmountField(
        help_text="How much more, in minor units of the authorization's currency: the new "
        "total is its `amount` and this."
    )


class ReturnCreate(CardReference):
    amount = AmountField()
    currency = CurrencyField()
    merchant = MerchantInput()
    authorizationId = StrictCharField(  # noqa: N815
        required=False,
        max_length=40,
        help_text="The presented authorization it refunds. Without it (a standalone refund) the "
        "key also needs `money:adjust`.",
    )


class MerchantOut(StoredDataSerializer):
    name = serializers.CharField()
    mcc = serializers.CharField()
    countryCode = serializers.CharField()  # noqa: N815
    channel = serializers.ChoiceField(choices=Channel.choices)


class AuthorizationOut(Serializer):
    authorizationId = serializers.CharField(source="id")  # noqa: N815
    cardId = serializers.CharField(source="card_id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    type = serializers.ChoiceField(choices=Authorization.Type.choices)
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    merchant = MerchantOut()
    approved = serializers.BooleanField()
    status = serializers.ChoiceField(choices=Authorization.Status.choices)
    declineCode = serializers.ChoiceField(  # noqa: N815
        source="decline_code_or_none", choices=DECLINE_CODES, allow_null=True
    )
    declineReason = serializers.CharField(source="decline_reason_or_none", allow_null=True)  # noqa: N815
    # Written as the decline was decided, so in that order (not read back: `stored=False`).
    declineDetails = StoredDataField(  # noqa: N815
        source="decline_details", allow_null=True, stored=False
    )
    holdId = serializers.CharField(source="hold_id", allow_null=True)  # noqa: N815
    transactionId = serializers.CharField(  # noqa: N815
        source="transaction_id", allow_null=True, help_text="Its statement line (approved only)."
    )
    presentedAmount = serializers.IntegerField(source="presented_amount", allow_null=True)  # noqa: N815
    presentedAt = TimestampField(source="presented_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class ProgramCallOut(Serializer):
    """The program's part (docs/decisioning.md, "The record")."""

    endpointId = serializers.CharField(source="decisioning_endpoint_id")  # noqa: N815
    mode = serializers.ChoiceField(choices=DecisioningEndpoint.Mode.choices, source="program_mode")
    latencyMs = serializers.IntegerField(source="program_latency_ms", allow_null=True)  # noqa: N815
    status = serializers.IntegerField(
        source="program_status", allow_null=True, help_text="The HTTP status it answered."
    )
    error = serializers.CharField(
        source="program_error_or_none",
        allow_null=True,
        help_text="Why there is no valid answer: `timeout: ...`, `status 500: ...`, `invalid "
        "answer: ...`, `connection failed: ...`, `refused: ...`, `degraded: not called`, `busy: "
        "not called, ...` (the institution's calls in flight at their limit), `no answer "
        "recorded: ...`.",
    )
    answer = serializers.JSONField(
        source="program_answer", allow_null=True, help_text="Its valid answer, as it sent it."
    )


class ProgramFundingOut(Serializer):
    """What a just-in-time program funded for the payment (docs/decisioning.md, "Just-in-time
    funding")."""

    funded = serializers.IntegerField(
        source="program_funded",
        help_text="Moved from the program's funding account to the account for this payment.",
    )
    returned = serializers.IntegerField(
        source="program_defunded",
        help_text="Given back to the program's funding account: released, presented for less, "
        "or refunded.",
    )


class AuthorizationOutV2(AuthorizationOut):
    metadata = MetadataField()
    partialApproval = serializers.BooleanField(  # noqa: N815
        source="partial_approval",
        help_text="The merchant takes less than asked: only then may TX or the program approve "
        "part.",
    )
    merchantAmount = serializers.IntegerField(  # noqa: N815
        source="merchant_amount",
        allow_null=True,
        help_text="What the merchant charged, in minor units of `merchantCurrency`; null when "
        "the network sent only the billing amount.",
    )
    merchantCurrency = serializers.CharField(source="merchant_currency", allow_null=True)  # noqa: N815
    conversionRate = serializers.CharField(  # noqa: N815
        source="conversion_rate_text",
        allow_null=True,
        help_text="Units of `currency` per unit of `merchantCurrency` (major units), a decimal "
        "string derived from the two amounts (at most 20 decimal places); null unless the "
        "currencies differ.",
    )
    decidedBy = serializers.ChoiceField(  # noqa: N815
        source="decided_by",
        choices=Authorization.DecidedBy.choices,
        help_text="tx: TX's checks alone; program: the program's answer; standin: the "
        "program's `onFailure`, it having failed to answer; network: the network's stand-in.",
    )
    decidedAt = TimestampField(source="decided_at", allow_null=True)  # noqa: N815
    kind = serializers.ChoiceField(
        choices=Authorization.Kind.choices,
        help_text="request: the network asked; advice: it approved in stand-in; force_post: "
        "it presented with no live authorization.",
    )
    overdrawnBy = serializers.IntegerField(  # noqa: N815
        source="overdrawn_by",
        help_text="What an advice or a force post took the account beyond its available "
        "balance (the flag: the account's `networkOverdraft` rose by as much); 0 when it was "
        "covered.",
    )
    requestedAmount = serializers.IntegerField(  # noqa: N815
        source="requested_amount_or_amount",
        help_text="What the network asked for; above `amount` when approved in part.",
    )
    program = ProgramCallOut(
        source="program_call", allow_null=True, help_text="Null: no program was asked."
    )
    programFunding = ProgramFundingOut(  # noqa: N815
        source="program_funding",
        allow_null=True,
        help_text="Null unless a just-in-time program approved and funded it.",
    )


AUTHORIZATION_OUTPUT = {V1: AuthorizationOut, V2: AuthorizationOutV2}


class IncrementOut(Serializer):
    incrementId = serializers.CharField(source="id")  # noqa: N815
    authorizationId = serializers.CharField(source="authorization_id")  # noqa: N815
    amount = serializers.IntegerField(help_text="How much more was asked.")
    approved = serializers.BooleanField()
    decision = serializers.ChoiceField(
        choices=AuthorizationIncrement.Decision.choices,
        help_text="awaiting_program: TX's checks passed and the increment is held while the "
        "card's program decides (seconds at most); the authorization takes no other message "
        "meanwhile.",
    )
    decidedBy = serializers.ChoiceField(  # noqa: N815
        source="decided_by",
        choices=AuthorizationIncrement.DecidedBy.choices,
        help_text="tx: TX's checks alone; program: the program's answer; standin: the "
        "program's `onFailure`, it having failed to answer.",
    )
    decidedAt = TimestampField(source="decided_at", allow_null=True)  # noqa: N815
    program = ProgramCallOut(
        source="program_call", allow_null=True, help_text="Null: no program was asked."
    )
    declineCode = serializers.ChoiceField(  # noqa: N815
        source="decline_code_or_none", choices=DECLINE_CODES, allow_null=True
    )
    declineReason = serializers.CharField(source="decline_reason_or_none", allow_null=True)  # noqa: N815
    declineDetails = StoredDataField(  # noqa: N815
        source="decline_details", allow_null=True, stored=False
    )
    holdId = serializers.CharField(  # noqa: N815
        source="hold_id",
        allow_null=True,
        help_text="Approved or awaiting its program: the hold of the new total that replaced "
        "the authorization's; declined after it was held: that hold, released.",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815


class IncrementWithAuthorizationOut(IncrementOut):
    authorization = AuthorizationOutV2(help_text="The authorization as it now stands.")


class ReturnOut(Serializer):
    returnId = serializers.CharField(source="id")  # noqa: N815
    cardId = serializers.CharField(source="card_id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    authorizationId = serializers.CharField(source="authorization_id", allow_null=True)  # noqa: N815
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    merchant = MerchantOut()
    transactionId = serializers.CharField(source="transaction_id")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class AuthorizationQuery(Serializer):
    cardId = StrictCharField(required=False, max_length=40)  # noqa: N815
    status = serializers.ChoiceField(choices=Authorization.Status.choices, required=False)


def _card(view, data):
    if "cardId" in data:
        return card_get(institution=view.institution, card_id=data["cardId"])
    # Counted and throttled per API key (cards.services.pan_guard).
    return card_by_pan(
        institution=view.institution, pan=data["pan"], actor=Actor.of_request(view.request)
    )


# A full card number in the body is card data: `pan` instead of `cardId` also needs it.
PAN_IN_BODY = scopes.BodyScope(scopes.CARDS_SENSITIVE, "a `pan` in the body", lambda d: "pan" in d)


# A view whose writes may call a card program (docs/decisioning.md): each write runs inside
# `decisioning.calls.scope()`, so the slot its first transaction takes for the call is given back
# by the time the request ends whatever happens (the call gives it back as soon as it returns).
# A comment, not a docstring: drf-spectacular would show a docstring as the views' description.
class CallsPrograms:
    def _run_write(self, request, handler, *args, **kwargs):
        with calls.scope():
            return super()._run_write(request, handler, *args, **kwargs)


class AuthorizationListView(CallsPrograms, TXView):
    write_scope = scopes.NETWORK
    body_scopes = (PAN_IN_BODY,)

    @document(
        name="Authorization",
        resources=AUTHORIZATION_OUTPUT,
        request=CREATE_INPUT,
        created=True,
        summary="Authorize a card payment (the card network's request)",
        description="Checks, in this order: card status and expiry, currency, security "
        "settings (channel, international, blocked MCCs and countries), the PIN when given, "
        "limits, monitoring rules, the account's status and available funds. Approved: a hold "
        "and an `Unsettled` transaction. Declined: `approved: false` with a `declineCode`; "
        "both answer 201 (v1: 200).",
        operation_id="card_authorizations_create",
        tags=["Card transactions"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        # Before the PAN is looked up: nothing resolved, nothing changed.
        scopes.require_body_scopes(request, self.body_scopes, data)
        kind = data.get("kind", Authorization.Kind.REQUEST)
        if kind != Authorization.Kind.REQUEST:
            authorization = authorization_record_network(
                kind=kind,
                card=_card(self, data),
                amount=data["amount"],
                currency=data["currency"],
                type=data["type"],
                merchant=dict(data["merchant"]),
                actor=Actor.of_request(request),
                metadata=data.get("metadata"),
                merchant_amount=data.get("merchantAmount"),
                merchant_currency=data.get("merchantCurrency"),
            )
            return self.created(_represent(self, authorization))
        authorization = authorization_create(
            card=_card(self, data),
            amount=data["amount"],
            currency=data["currency"],
            type=data["type"],
            merchant=dict(data["merchant"]),
            pin=data.get("pin"),
            actor=Actor.of_request(request),
            metadata=data.get("metadata"),
            # v1 keeps its behaviour: TX decides alone (docs/decisioning.md).
            ask_program=request.version == V2,
            merchant_amount=data.get("merchantAmount"),
            merchant_currency=data.get("merchantCurrency"),
            partial_approval=data.get("partialApproval", False),
        )
        if not program_to_ask(authorization):
            return self.created(_represent(self, authorization))
        # Committed and held: the program is asked with nothing open, then the second
        # transaction decides (authorizations.services.program).
        return Continued(
            authorization.pk,
            outside=lambda: authorization_ask_program(authorization=authorization),
            inside=lambda result: self.created(
                _represent(self, authorization_decide(authorization=authorization, result=result))
            ),
        )

    def resume(self, request, resource_id):
        authorization = authorization_get(
            institution=self.institution, authorization_id=resource_id
        )
        if authorization.awaiting_program:
            raise IdempotencyKeyInUse()
        return self.created(_represent(self, authorization))

    @document(
        name="Authorization",
        resources=AUTHORIZATION_OUTPUT,
        many=True,
        parameters=[
            OpenApiParameter("cardId", str, description="Only this card's authorizations."),
            OpenApiParameter(
                "status", str, enum=Authorization.Status.values, description="Only these."
            ),
        ],
        summary="List card authorizations, newest first",
        operation_id="card_authorizations_list",
        tags=["Card transactions"],
    )
    def get(self, request):
        query = self.parse_query(AuthorizationQuery)
        authorizations = authorization_list(
            institution=self.institution,
            card_id=query.get("cardId"),
            status=query.get("status"),
        )
        return self.respond_list(authorizations, self.for_version(AUTHORIZATION_OUTPUT))


class AuthorizationDetailView(TXView):
    @document(
        name="Authorization",
        resources=AUTHORIZATION_OUTPUT,
        summary="Retrieve a card authorization",
        operation_id="card_authorizations_retrieve",
        tags=["Card transactions"],
    )
    def get(self, request, authorizationId):  # noqa: N803 (path parameters are camelCase)
        authorization = authorization_get(
            institution=self.institution, authorization_id=authorizationId
        )
        return self.respond(self.for_version(AUTHORIZATION_OUTPUT)(authorization).data)


class PresentmentsView(TXView):
    write_scope = scopes.NETWORK

    @document(
        name="Authorization",
        resources=AUTHORIZATION_OUTPUT,
        request=PRESENTMENT_INPUT,
        created=True,
        summary="Present (clear) an authorization",
        description="Captures the hold and settles the transaction (`Presentment`). Lower "
        "amounts release the rest; up to 20% more needs the difference available (422 "
        "`insufficient_funds`); beyond, 422 `amount_exceeds_remaining`. 409 unless pending. "
        "v2: `final: false` clears part and keeps the rest held (the authorization stays "
        "pending) for the next presentments.",
        operation_id="card_authorizations_presentments_create",
        tags=["Card transactions"],
    )
    def post(self, request, authorizationId):  # noqa: N803
        authorization = authorization_get(
            institution=self.institution, authorization_id=authorizationId
        )
        data = self.parse(self.for_version(PRESENTMENT_INPUT))
        authorization = authorization_present(
            authorization=authorization,
            amount=data.get("amount"),
            final=data.get("final", True),
            actor=Actor.of_request(request),
        )
        return self.created(_represent(self, authorization))


class ReversalsView(TXView):
    write_scope = scopes.NETWORK

    @document(
        name="Authorization",
        resources=AUTHORIZATION_OUTPUT,
        request=both(ReversalCreate),
        created=True,
        summary="Reverse an authorization",
        description="Releases the whole hold and gives the amount back to the card's limits. "
        "409 unless pending.",
        operation_id="card_authorizations_reversals_create",
        tags=["Card transactions"],
    )
    def post(self, request, authorizationId):  # noqa: N803
        authorization = authorization_get(
            institution=self.institution, authorization_id=authorizationId
        )
        self.parse(ReversalCreate)
        authorization = authorization_reverse(
            authorization=authorization, actor=Actor.of_request(request)
        )
        return self.created(_represent(self, authorization))


class IncrementsView(CallsPrograms, TXView):
    """v2 only (`authorization_urls`): incremental authorizations."""

    write_scope = scopes.NETWORK

    @document(
        name="AuthorizationIncrement",
        resources={V2: IncrementWithAuthorizationOut},
        request={V2: IncrementCreate},
        created=True,
        summary="Raise a pending authorization (an incremental authorization)",
        description="Checked like a new authorization of `amount` at the same merchant (card "
        "status, expiry and settings, limits with the new total as one transaction, "
        "monitoring, the account's funds), then decided by the card's program when it has a "
        "decisioning endpoint (an `authorization.increment` request; approved whole or "
        "declined). Approved: the authorization's `amount` grows by it and its hold is "
        "replaced by one of the new total. Declined: `approved: false` with a `declineCode`, "
        "the authorization as it was. Both answer 201. 409 unless pending, and while another "
        "increment of it awaits its program.",
        operation_id="card_authorizations_increments_create",
        tags=["Card transactions"],
    )
    def post(self, request, authorizationId):  # noqa: N803
        authorization = authorization_get(
            institution=self.institution, authorization_id=authorizationId
        )
        data = self.parse(IncrementCreate)
        increment = authorization_increment(
            authorization=authorization,
            amount=data["amount"],
            actor=Actor.of_request(request),
            ask_program=True,
        )
        if not increment_program_to_ask(increment):
            return self.created(self._body(increment))
        # Committed and held: the program is asked with nothing open, then the second
        # transaction decides (authorizations.services.increment_program).
        return Continued(
            increment.pk,
            outside=lambda: increment_ask_program(increment=increment),
            inside=lambda result: self.created(
                self._body(increment_decide(increment=increment, result=result))
            ),
        )

    def resume(self, request, resource_id):
        increment = authorization_increment_get(
            institution=self.institution, increment_id=resource_id
        )
        if increment.awaiting_program:
            raise IdempotencyKeyInUse()
        return self.created(self._body(increment))

    def _body(self, increment) -> dict:
        body = IncrementOut(increment).data
        body["authorization"] = _represent(self, increment.authorization)
        return body

    @document(
        name="AuthorizationIncrement",
        resources={V2: IncrementOut},
        many=True,
        summary="List an authorization's increments, newest first",
        operation_id="card_authorizations_increments_list",
        tags=["Card transactions"],
    )
    def get(self, request, authorizationId):  # noqa: N803
        authorization = authorization_get(
            institution=self.institution, authorization_id=authorizationId
        )
        return self.respond_list(
            authorization_increment_list(authorization=authorization), IncrementOut
        )


def _represent(view, authorization) -> dict:
    """The authorization as it now stands, in the view's version."""
    authorization = authorization_get(
        institution=view.institution, authorization_id=authorization.pk
    )
    return view.for_version(AUTHORIZATION_OUTPUT)(authorization).data


class ReturnListView(TXView):
    write_scope = scopes.NETWORK
    body_scopes = (
        PAN_IN_BODY,  # like authorizations: a `pan` names the card by its full number
        # A return that refunds no authorization is limited by nothing the network did: it is
        # money the institution gives, like a load (docs/card-transactions.md).
        scopes.BodyScope(
            scopes.MONEY_ADJUST,
            "no `authorizationId` in the body",
            lambda data: "authorizationId" not in data,
        ),
    )

    @document(
        name="CardReturn",
        resources=both(ReturnOut),
        request=both(ReturnCreate),
        created=True,
        summary="Record a merchant return (refund)",
        description="Credits the card's account at once: a `Return` transaction, "
        "`Presentment`. With `authorizationId`, returns add up to at most its presented "
        "amount (422 `amount_exceeds_remaining`).",
        operation_id="card_returns_create",
        tags=["Card transactions"],
    )
    def post(self, request):
        data = self.parse(ReturnCreate)
        # Before the PAN or the authorization is looked up: nothing resolved, nothing changed.
        scopes.require_body_scopes(request, self.body_scopes, data)
        authorization = None
        if "authorizationId" in data:
            authorization = authorization_get(
                institution=self.institution, authorization_id=data["authorizationId"]
            )
        card_return = card_return_create(
            card=_card(self, data),
            amount=data["amount"],
            currency=data["currency"],
            merchant=dict(data["merchant"]),
            authorization=authorization,
            actor=Actor.of_request(request),
        )
        card_return = card_return_get(institution=self.institution, return_id=card_return.pk)
        return self.created(ReturnOut(card_return).data)


class ReturnDetailView(TXView):
    @document(
        name="CardReturn",
        resources=both(ReturnOut),
        summary="Retrieve a merchant return",
        operation_id="card_returns_retrieve",
        tags=["Card transactions"],
    )
    def get(self, request, returnId):  # noqa: N803
        return self.respond(
            ReturnOut(card_return_get(institution=self.institution, return_id=returnId)).data
        )
