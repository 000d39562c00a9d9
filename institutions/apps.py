from django.apps import AppConfig


class InstitutionsConfig(AppConfig):
    name = "institutions"
    verbose_name = "Institutions"
