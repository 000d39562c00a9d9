from django.urls import path

from .apis import AccountProductListView

urlpatterns = [
    path("products/accounts", AccountProductListView.as_view(), name="account-products"),
]
