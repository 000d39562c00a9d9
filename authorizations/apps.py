from django.apps import AppConfig


class AuthorizationsConfig(AppConfig):
    name = "authorizations"
    verbose_name = "Card transactions"
