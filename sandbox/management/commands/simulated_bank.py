from core.management.base import TXCommand
from payments.models import AchProfile
from sandbox.simulated_bank import simulated_bank_run


class Command(TXCommand):
    help = (
        "The simulated sponsor bank (docs/payments.md, 'The simulated bank'): answers the files "
        "TX delivered into each institution's ACH outbox with real NACHA return and change "
        "files in its inbox, by the scenario each entry's account number names."
    )

    def handle(self, *args, **options):
        for profile in AchProfile.objects.select_related("institution"):
            for name in simulated_bank_run(institution=profile.institution):
                self.stdout.write(f"{profile.institution_id}: wrote {name}")
