from django.apps import AppConfig


class InstitutionsConfig(AppConfig):
    name = "institutions"
    verbose_name = "Institutions"

    def ready(self):
        from core.admin import register_staff_institutions

        from .staff import staff_institutions

        register_staff_institutions(staff_institutions)
