from django.urls import path

from .apis import CustomerDetailView, CustomerListView

urlpatterns = [
    path("customers", CustomerListView.as_view(), name="customers"),
    path("customers/<str:customer_id>", CustomerDetailView.as_view(), name="customer"),
]
