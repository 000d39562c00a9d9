from django.apps import AppConfig


class AuthorizationsConfig(AppConfig):
    name = "authorizations"
    verbose_name = "Card transactions"

    def ready(self):
        from accounts import verification

        from .verification import CHECKS

        for name, sql in CHECKS.items():
            verification.register(name, sql)
