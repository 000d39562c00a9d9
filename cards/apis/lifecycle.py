"""`/cards/{cardId}/renewals`, `/reissues`, `/replacements`: each answers 201 with the new card,
linked to the old one both ways (`predecessorCardId`, `successorCardId`); the rules are in
`cards.services.lifecycle`."""

from api.schema import document
from api.views import TXView
from institutions import scopes

from ..selectors import card_get
from ..services import card_reissue, card_renew, card_replace
from .serializers import (
    OUTPUT,
    ReissueCreate,
    RenewalCreate,
    ReplacementCreate,
    V1ReissueCreate,
    V1RenewalCreate,
    V1ReplacementCreate,
)

RENEWAL = {"v1": V1RenewalCreate, "v2": RenewalCreate}
REISSUE = {"v1": V1ReissueCreate, "v2": ReissueCreate}
REPLACEMENT = {"v1": V1ReplacementCreate, "v2": ReplacementCreate}


class CardRenewalsView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="Card",
        resources=OUTPUT,
        request=RENEWAL,
        created=True,
        summary="Renew a card: same PAN, new expiry and CVV",
        description="For an inactive, active, suspended or expired card. The new card takes "
        "the old one's status (inactive when the old one expired); the old card is closed. "
        "Expiry: the later of the old expiry and this month, plus the product's validity.",
        operation_id="cards_renewals_create",
        tags=["Card lifecycle"],
    )
    def post(self, request, cardId):  # noqa: N803 (path parameters are camelCase)
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(self.for_version(RENEWAL))
        successor = card_renew(
            card=card,
            delivery_address=data.get("deliveryAddress"),
        )
        return self.created(self.for_version(OUTPUT)(successor).data)


class CardReissuesView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="Card",
        resources=OUTPUT,
        request=REISSUE,
        created=True,
        summary="Reissue a card: same PAN, expiry and CVV on a new plastic",
        description="For a damaged card or a name change (`embossedName`); physical cards "
        "only. The new card takes the old one's status; the old card is closed.",
        operation_id="cards_reissues_create",
        tags=["Card lifecycle"],
    )
    def post(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(self.for_version(REISSUE))
        successor = card_reissue(
            card=card,
            embossed_name=data.get("embossedName"),
            delivery_address=data.get("deliveryAddress"),
            reason=data.get("reason", ""),
        )
        return self.created(self.for_version(OUTPUT)(successor).data)


class CardReplacementsView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="Card",
        resources=OUTPUT,
        request=REPLACEMENT,
        created=True,
        summary="Replace a card: new PAN, expiry and CVV",
        description="The new card is inactive. The old card becomes lost or stolen (reasons "
        "`lost`, `stolen`) or closed (`damaged`, `compromised`); a card already lost or "
        "stolen keeps its status. Controls, limits, risk level and PIN carry over.",
        operation_id="cards_replacements_create",
        tags=["Card lifecycle"],
    )
    def post(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(self.for_version(REPLACEMENT))
        successor = card_replace(
            card=card,
            reason=data["reason"],
            delivery_address=data.get("deliveryAddress"),
        )
        return self.created(self.for_version(OUTPUT)(successor).data)
