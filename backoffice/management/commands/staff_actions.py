from django.core.management.base import BaseCommand

from backoffice.actions.catalogue import markdown


class Command(BaseCommand):
    help = (
        "Print the table of every staff action and form write the back office declares, as "
        'docs/back-office.md holds it ("Staff actions"): paste it there after changing one.'
    )

    def handle(self, *args, **options):
        self.stdout.write(markdown(), ending="")
