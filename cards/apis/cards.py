"""`/cards`: issue, list, read, change status and risk level, read the secrets (scope
`cards:sensitive`), find by PAN. v1 and v2 differ only in the delivery address's country field."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from accounts.selectors import account_get
from api.client_ip import client_address
from api.context import context_of
from api.schema import both, document
from api.serializers import Serializer, StrictCharField
from api.views import TXView
from core.actors import Actor
from customers.selectors import customer_get
from institutions import scopes

from ..models import Card
from ..selectors import card_get, card_list, card_product_get
from ..services import (
    card_by_pan,
    card_issue,
    card_sensitive_details,
    card_set_status,
    card_update,
)
from .serializers import (
    OUTPUT,
    UPDATE_INPUT,
    CardCreate,
    CardLookup,
    SensitiveDetailsOut,
    V1CardCreate,
)

CREATE_INPUT = {"v1": V1CardCreate, "v2": CardCreate}


class CardQuery(Serializer):
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    customerId = StrictCharField(required=False, max_length=40)  # noqa: N815
    status = serializers.ChoiceField(choices=Card.Status.choices, required=False)


class CardListView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="Card",
        resources=OUTPUT,
        request=CREATE_INPUT,
        created=True,
        summary="Issue a card",
        description="Debit cards on current accounts, prepaid cards on prepaid accounts (400 "
        "otherwise). Physical cards need `deliveryAddress`; virtual cards take none. With "
        "`primaryCardId` the card is supplementary: the primary card's account, another "
        "customer. The card is `inactive` unless `status: active` is asked for.",
        operation_id="cards_create",
        tags=["Cards"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        primary_card = None
        if "primaryCardId" in data:
            primary_card = card_get(institution=self.institution, card_id=data["primaryCardId"])
        account = account_get(
            institution=self.institution,
            account_id=data.get("accountId") or primary_card.account_id,
        )
        card = card_issue(
            account=account,
            customer=customer_get(institution=self.institution, customer_id=data["customerId"]),
            product=card_product_get(
                institution=self.institution, product_id=data["cardProductRid"]
            ),
            form=data["form"],
            embossed_name=data.get("embossedName"),
            delivery_address=data.get("deliveryAddress"),
            primary_card=primary_card,
            status=data.get("status", Card.Status.INACTIVE),
            metadata=data.get("metadata"),
        )
        return self.created(self.for_version(OUTPUT)(card).data)

    @document(
        name="Card",
        resources=OUTPUT,
        many=True,
        parameters=[
            OpenApiParameter("accountId", str, description="Only the cards on this account."),
            OpenApiParameter("customerId", str, description="Only this cardholder's cards."),
            OpenApiParameter("status", str, enum=Card.Status.values, description="Only these."),
        ],
        summary="List cards, newest first",
        operation_id="cards_list",
        tags=["Cards"],
    )
    def get(self, request):
        query = self.parse_query(CardQuery)
        cards = card_list(
            institution=self.institution,
            account_id=query.get("accountId"),
            customer_id=query.get("customerId"),
            status=query.get("status"),
        )
        return self.respond_list(cards.select_related("product"), self.for_version(OUTPUT))


class CardDetailView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="Card",
        resources=OUTPUT,
        summary="Retrieve a card",
        description="The PAN is masked (`first6******last4`); the full PAN and CVV are at "
        "`/cards/{cardId}/sensitive-details`.",
        operation_id="cards_retrieve",
        tags=["Cards"],
    )
    def get(self, request, cardId):  # noqa: N803 (path parameters are camelCase)
        card = card_get(institution=self.institution, card_id=cardId)
        return self.respond(self.for_version(OUTPUT)(card).data)

    @document(
        name="Card",
        resources=OUTPUT,
        request=UPDATE_INPUT,
        summary="Change a card's status or risk level",
        description="Status: `inactive -> active <-> suspended`, `active | suspended -> lost | "
        "stolen | closed`; lost, stolen, closed and expired are final; anything else is 409 "
        "`invalid_state_transition` with `from` and `to`. `riskLevel`: low, medium, high. "
        "v2 also takes `metadata` (merged: a key set to null is removed; docs/metadata.md), on "
        "a card of any status; what is given changes together or not at all.",
        operation_id="cards_update",
        tags=["Cards"],
    )
    def patch(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(self.for_version(UPDATE_INPUT))
        if "status" in data:
            card_set_status(card=card, status=data["status"], reason=data.get("reason", ""))
        if "riskLevel" in data or "metadata" in data:
            card_update(card=card, risk_level=data.get("riskLevel"), metadata=data.get("metadata"))
        card = card_get(institution=self.institution, card_id=cardId)
        return self.respond(self.for_version(OUTPUT)(card).data)


class CardSensitiveDetailsView(TXView):
    read_scope = scopes.CARDS_SENSITIVE
    # Each read writes its access record (a freshly issued card must not be missing): primary.
    replica_reads = False

    @document(
        name="CardSensitiveDetails",
        resources=both(SensitiveDetailsOut),
        summary="Read a card's full PAN and CVV",
        description="Needs the key scope `cards:sensitive` (403 `permission_denied`); every "
        "read is recorded (key, time, address, request id). Live cards only (422 "
        "`card_not_active`). Answers carry `Cache-Control: no-store`.",
        operation_id="cards_sensitive_details_retrieve",
        tags=["Cards"],
    )
    def get(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        details = card_sensitive_details(
            card=card,
            actor=Actor.of_request(request),
            request_id=context_of(request).tran_id,
            client_ip=_as_text(client_address(request._request)),
        )
        response = self.respond(
            {
                "cardId": card.pk,
                "pan": details["pan"],
                "cvv": details["cvv"],
                "expiryMonth": details["expiry_month"],
                "expiryYear": details["expiry_year"],
            }
        )
        response["Cache-Control"] = "no-store"
        return response


class CardLookupView(TXView):
    write_scope = scopes.CARDS_SENSITIVE

    @document(
        name="Card",
        resources=OUTPUT,
        request=both(CardLookup),
        summary="Find a card by its PAN",
        description="The PAN is sensitive, so it travels in the body, never in a URL. The live "
        "card holding it, else the newest card that held it; 404 when none of the "
        "institution's cards has it. Each 404 counts against the key: at 10 in an hour (by "
        "default) every operation taking a PAN answers 429 `rate_limited` until the oldest "
        "leaves the window (`Retry-After`).",
        operation_id="card_lookups_create",
        tags=["Cards"],
    )
    def post(self, request):
        data = self.parse(CardLookup)
        card = card_by_pan(
            institution=self.institution, pan=data["pan"], actor=Actor.of_request(request)
        )
        return self.respond(self.for_version(OUTPUT)(card).data)


def _as_text(address) -> str | None:
    return None if address is None else str(address)
