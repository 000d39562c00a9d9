"""Card routes. The joint-account path differs per version (docs/design.md section 4), so the routes
are built per version; `cards/joint-account` comes before `cards/<cardId>`."""

from django.urls import path

from .apis.cards import (
    CardDetailView,
    CardListView,
    CardLookupView,
    CardSensitiveDetailsView,
)
from .apis.controls import (
    CardLimitsView,
    CardPinVerificationsView,
    CardPinView,
    CardSecuritySettingsView,
)
from .apis.joint import JointAccountView
from .apis.lifecycle import CardReissuesView, CardRenewalsView, CardReplacementsView
from .apis.products import CardProductDetailView, CardProductListCreateView, CardProductListView


def card_urls(version: str):
    joint = (
        path("cards/joint-account", JointAccountView.as_view(), name="joint-account")
        if version == "v1"
        else path("joint-accounts", JointAccountView.as_view(), name="joint-accounts")
    )
    # v1, the legacy line, lists card products; v2 also makes and changes them.
    products = (
        [path("products/cards", CardProductListView.as_view(), name="card-products")]
        if version == "v1"
        else [
            path("products/cards", CardProductListCreateView.as_view(), name="card-products"),
            path(
                "products/cards/<id:cardProductRid>",
                CardProductDetailView.as_view(),
                name="card-product",
            ),
        ]
    )
    return [
        *products,
        joint,
        path("cards", CardListView.as_view(), name="cards"),
        path("card-lookups", CardLookupView.as_view(), name="card-lookups"),
        path("cards/<id:cardId>", CardDetailView.as_view(), name="card"),
        path(
            "cards/<id:cardId>/sensitive-details",
            CardSensitiveDetailsView.as_view(),
            name="card-sensitive-details",
        ),
        path("cards/<id:cardId>/renewals", CardRenewalsView.as_view(), name="card-renewals"),
        path("cards/<id:cardId>/reissues", CardReissuesView.as_view(), name="card-reissues"),
        path(
            "cards/<id:cardId>/replacements",
            CardReplacementsView.as_view(),
            name="card-replacements",
        ),
        path(
            "cards/<id:cardId>/security-settings",
            CardSecuritySettingsView.as_view(),
            name="card-security-settings",
        ),
        path("cards/<id:cardId>/limits", CardLimitsView.as_view(), name="card-limits"),
        path("cards/<id:cardId>/pin", CardPinView.as_view(), name="card-pin"),
        path(
            "cards/<id:cardId>/pin-verifications",
            CardPinVerificationsView.as_view(),
            name="card-pin-verifications",
        ),
    ]
