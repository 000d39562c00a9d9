from django.urls import path

from .apis.endpoints import WebhookEndpointDetailView, WebhookEndpointListView

urlpatterns = [
    path("webhook-endpoints", WebhookEndpointListView.as_view(), name="webhook-endpoints"),
    path(
        "webhook-endpoints/<id:endpointId>",
        WebhookEndpointDetailView.as_view(),
        name="webhook-endpoint",
    ),
]
