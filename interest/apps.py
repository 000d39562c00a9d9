from django.apps import AppConfig


class InterestConfig(AppConfig):
    name = "interest"
    verbose_name = "Interest"
