from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API requests"

    def ready(self):
        from django.urls import register_converter

        from api import schema  # noqa: F401  (registers the ApiKeyAuth OpenAPI extension)
        from api.jsonlog import install_tran_id_on_records
        from api.reencryption import IDEMPOTENCY_RECORDS
        from core import reencryption
        from core.ids import IdConverter

        install_tran_id_on_records()
        reencryption.register(IDEMPOTENCY_RECORDS)
        # `<id:...>`: every path id of every app, known before any urls.py is imported.
        register_converter(IdConverter, "id")
