from django.urls import path

from api.versions import V2

from .apis.days import InterestDaysView
from .apis.interest import AccountInterestView, InterestSettlementsView
from .apis.overrides import InterestOverridesView
from .apis.previews import InterestPreviewView
from .apis.terms import InterestTermsView


def interest_urls(version: str):
    """v2 only: the legacy line has no interest (docs/interest.md)."""
    if version != V2:
        return []
    return [
        path(
            "products/accounts/<id:productRid>/interest-rates",
            InterestTermsView.as_view(),
            name="account-product-interest-rates",
        ),
        path(
            "accounts/<id:accountId>/interest-rates",
            InterestOverridesView.as_view(),
            name="account-interest-rates",
        ),
        path(
            "products/accounts/<id:productRid>/interest-previews",
            InterestPreviewView.as_view(),
            name="account-product-interest-previews",
        ),
        path(
            "accounts/<id:accountId>/interest/days",
            InterestDaysView.as_view(),
            name="account-interest-days",
        ),
        path(
            "accounts/<id:accountId>/interest",
            AccountInterestView.as_view(),
            name="account-interest",
        ),
        path(
            "accounts/<id:accountId>/interest/settlements",
            InterestSettlementsView.as_view(),
            name="account-interest-settlements",
        ),
    ]
