from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core.postgresql.replication import replication_check

        # Once per process: is replication synchronous? (docs/deployment.md)
        connection_created.connect(replication_check, dispatch_uid="core.replication_check")
