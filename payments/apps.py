from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = "Payments to other banks"

    def ready(self):
        from accounts import ibans, verification
        from core import reencryption

        from .account_ibans import registered_iban
        from .reencryption import EXTERNAL_ACCOUNTS, INBOUND_ENTRIES
        from .verification import CHECKS

        for name, sql in CHECKS.items():
            verification.register(name, sql)
        reencryption.register(EXTERNAL_ACCOUNTS)
        reencryption.register(INBOUND_ENTRIES)
        ibans.register(registered_iban, related=("institution__sepa_profile",))
