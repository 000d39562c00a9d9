from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = "Payments to other banks"

    def ready(self):
        from accounts import verification
        from core import reencryption

        from .reencryption import EXTERNAL_ACCOUNTS, INBOUND_ENTRIES
        from .verification import CHECKS

        for name, sql in CHECKS.items():
            verification.register(name, sql)
        reencryption.register(EXTERNAL_ACCOUNTS)
        reencryption.register(INBOUND_ENTRIES)
