from django.apps import AppConfig


class ReconciliationConfig(AppConfig):
    name = "reconciliation"
    verbose_name = "Reconciliation"

    def ready(self):
        # The bank's statements dropped in the rails' inbox are read here, not as rail files
        # (payments sits below: it calls whoever registered, docs/architecture.md).
        from payments import connector

        from .services.statements import statement_from_inbox

        connector.register_statement_reader(statement_from_inbox)
