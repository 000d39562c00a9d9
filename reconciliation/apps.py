from django.apps import AppConfig


class ReconciliationConfig(AppConfig):
    name = "reconciliation"
    verbose_name = "Reconciliation"

    def ready(self):
        # The bank's statements dropped in the rails' inbox are read here, not as rail files
        # (payments sits below: it calls whoever registered, docs/architecture.md).
        from accounts import verification
        from payments import connector

        from .services.proof import CHECKS
        from .services.statements import statement_from_inbox

        connector.register_statement_reader(statement_from_inbox)
        # `verify_ledger` proves every reconciled statement (docs/reconciliation.md).
        for name, sql in CHECKS.items():
            verification.register(name, sql)
