from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "API access: institutions, keys, idempotency"

    def ready(self):
        from . import schema  # noqa: F401  (registers the ApiKeyAuth OpenAPI extension)
        from .jsonlog import install_tran_id_on_records

        install_tran_id_on_records()
