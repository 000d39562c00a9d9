"""`/cards/{cardId}/security-settings`, `/limits`, `/pin`, `/pin-verifications`. Identical in
both versions. A PIN is never returned; a wrong `currentPin` is refused with its try still
counted (`cards.services.pin`, through the operation's `keep_if_refused`)."""

from api.schema import both, document
from api.views import TXView
from core.actors import Actor
from institutions import scopes

from ..selectors import card_get
from ..services import (
    card_limits_set,
    card_pin_set,
    card_pin_unblock,
    card_pin_verify,
    card_security_settings_set,
    card_usage,
)
from .serializers import (
    LimitsOut,
    LimitsUpdate,
    PinOut,
    PinUpdate,
    PinVerificationCreate,
    PinVerificationOut,
    SecuritySettingsOut,
    SecuritySettingsUpdate,
)


class CardSecuritySettingsView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="CardSecuritySettings",
        resources=both(SecuritySettingsOut),
        summary="Read a card's security settings",
        operation_id="cards_security_settings_retrieve",
        tags=["Card controls"],
    )
    def get(self, request, cardId):  # noqa: N803 (path parameters are camelCase)
        card = card_get(institution=self.institution, card_id=cardId)
        return self.respond(SecuritySettingsOut(card).data)

    @document(
        name="CardSecuritySettings",
        resources=both(SecuritySettingsOut),
        request=both(SecuritySettingsUpdate),
        summary="Change a card's security settings",
        description="Send only what changes. `blockedMccs` (4-digit merchant category codes) "
        "and `blockedCountries` (ISO 3166-1 numeric) replace the stored lists. 422 "
        "`card_not_active` for a lost, stolen, closed or expired card.",
        operation_id="cards_security_settings_update",
        tags=["Card controls"],
    )
    def patch(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        changes = self.parse(SecuritySettingsUpdate)
        card = card_security_settings_set(card=card, changes=dict(changes))
        return self.respond(SecuritySettingsOut(card).data)


class CardLimitsView(TXView):
    write_scope = scopes.CARDS_WRITE

    @document(
        name="CardLimits",
        resources=both(LimitsOut),
        summary="Read a card's limits and what it has spent today and this month",
        description="In minor units of the account's currency. Days and months are the "
        "institution's calendar (its time zone, UTC by default).",
        operation_id="cards_limits_retrieve",
        tags=["Card controls"],
    )
    def get(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        return self.respond(_limits(card))

    @document(
        name="CardLimits",
        resources=both(LimitsOut),
        request=both(LimitsUpdate),
        summary="Change a card's limits",
        description="Send only what changes. The result must keep perTransaction <= daily <= "
        "monthly and dailyCash <= daily (400 otherwise); 0 blocks that kind of spending.",
        operation_id="cards_limits_update",
        tags=["Card controls"],
    )
    def patch(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        changes = self.parse(LimitsUpdate)
        card = card_limits_set(card=card, changes=dict(changes))
        return self.respond(_limits(card))


def _limits(card) -> dict:
    card.usage = card_usage(card)
    return LimitsOut(card).data


class CardPinView(TXView):
    write_scope = scopes.CARDS_PIN

    @document(
        name="CardPin",
        resources=both(PinOut),
        request=both(PinUpdate),
        summary="Set, change or unblock a card's PIN",
        description='`{"pin"}` sets a first PIN; `{"pin", "currentPin"}` changes it (a wrong '
        "`currentPin` is 422 `incorrect_pin` and counts as a try; the third wrong try in a row "
        'blocks the PIN: 422 `pin_blocked`); `{"blocked": false}` unblocks, at most twice per '
        "card (and its renewals and replacements) in a rolling 30 days: the next is 422 "
        "`pin_unblock_limit` and only the institution's staff can unblock it. The PIN is never "
        "returned.",
        operation_id="cards_pin_update",
        tags=["Card PIN"],
    )
    def patch(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(PinUpdate)
        actor = Actor.of_request(request)
        if "blocked" in data:
            card_pin_unblock(card=card, actor=actor)
        else:
            card_pin_set(card=card, pin=data["pin"], current_pin=data.get("currentPin"))
        card = card_get(institution=self.institution, card_id=cardId)
        return self.respond(PinOut(card).data)


class CardPinVerificationsView(TXView):
    write_scope = scopes.CARDS_PIN

    @document(
        name="PinVerification",
        resources=both(PinVerificationOut),
        request=both(PinVerificationCreate),
        created=True,
        summary="Verify a card's PIN",
        description="`verified` true or false; three wrong tries in a row block the PIN "
        "(`pinBlocked`), after which every try is 422 `pin_blocked` until it is unblocked. "
        "422 `incorrect_pin` when no PIN is set.",
        operation_id="cards_pin_verifications_create",
        tags=["Card PIN"],
    )
    def post(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        data = self.parse(PinVerificationCreate)
        check = card_pin_verify(card=card, pin=data["pin"])
        return self.created(
            {
                "cardId": card.pk,
                "verified": check.verified,
                "pinBlocked": check.blocked,
                "remainingTries": check.remaining_tries,
            }
        )
