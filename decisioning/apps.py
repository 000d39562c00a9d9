from django.apps import AppConfig


class DecisioningConfig(AppConfig):
    name = "decisioning"
    verbose_name = "Program decisioning"

    def ready(self):
        from core import reencryption
        from decisioning.reencryption import DECISIONING_ENDPOINTS

        # Their signing secrets (current and previous) re-encrypt under a new key with the
        # others (`manage.py reencrypt_sensitive_data`).
        reencryption.register(DECISIONING_ENDPOINTS)
