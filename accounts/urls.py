from django.urls import path

from .apis.accounts import (
    AccountAdjustmentsView,
    AccountBalancesView,
    AccountDetailView,
    AccountListView,
    AccountLookupView,
)
from .apis.holds import HoldCapturesView, HoldDetailView, HoldListView
from .apis.products import AccountProductListView

urlpatterns = [
    path("products/accounts", AccountProductListView.as_view(), name="account-products"),
    path("accounts", AccountListView.as_view(), name="accounts"),
    path("accounts/<id:accountId>", AccountDetailView.as_view(), name="account"),
    path("accounts/<id:accountId>/balances", AccountBalancesView.as_view(), name="balances"),
    path(
        "accounts/<id:accountId>/adjustments",
        AccountAdjustmentsView.as_view(),
        name="adjustments",
    ),
    path("account-lookups", AccountLookupView.as_view(), name="account-lookups"),
    path("holds", HoldListView.as_view(), name="holds"),
    path("holds/<id:holdId>", HoldDetailView.as_view(), name="hold"),
    path("holds/<id:holdId>/captures", HoldCapturesView.as_view(), name="hold-captures"),
]
