from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API: idempotency records"

    def ready(self):
        from api import schema  # noqa: F401  (registers the ApiKeyAuth OpenAPI extension)
        from api.jsonlog import install_tran_id_on_records

        install_tran_id_on_records()
