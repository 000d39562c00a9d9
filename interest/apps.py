from django.apps import AppConfig


class InterestConfig(AppConfig):
    name = "interest"
    verbose_name = "Interest"

    def ready(self):
        from accounts import closing, verification

        from .posting import interest_close_check
        from .verification import CHECKS

        # `verify_ledger` checks the interest books against their accruals and the ledger.
        for name, sql in CHECKS.items():
            verification.register(name, sql)
        # An account with interest accrued and not posted does not close (docs/interest.md).
        closing.register(interest_close_check)
