from django.urls import path

from .apis import CustomerDetailView, CustomerListView

urlpatterns = [
    path("customers", CustomerListView.as_view(), name="customers"),
    path("customers/<id:customerId>", CustomerDetailView.as_view(), name="customer"),
]
