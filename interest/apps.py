from django.apps import AppConfig


class InterestConfig(AppConfig):
    name = "interest"
    verbose_name = "Interest"

    def ready(self):
        from accounts import verification

        from .verification import CHECKS

        # `verify_ledger` checks the interest books against their accruals and the ledger.
        for name, sql in CHECKS.items():
            verification.register(name, sql)
