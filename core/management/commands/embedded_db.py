import subprocess

from django.core.management.base import BaseCommand, CommandError

from core import embedded_db


class Command(BaseCommand):
    help = (
        "The embedded PostgreSQL under .data/ (used when DATABASE_URL is unset): status, url, stop."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "url", "stop"])

    def handle(self, *args, action, **options):
        if not embedded_db.PGDATA.exists():
            raise CommandError("No embedded database under .data/pg.")
        if action == "stop":
            try:
                embedded_db.stop()
            except subprocess.CalledProcessError:
                self.stdout.write("not running")
                return
            self.stdout.write("stopped")
            return
        pg = embedded_db.server()
        if action == "status":
            self.stdout.write(f"running, pid {pg.get_pid()}, data in {embedded_db.PGDATA}")
        else:
            self.stdout.write(pg.get_uri(embedded_db.DATABASE_NAME))
