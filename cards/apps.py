from django.apps import AppConfig


class CardsConfig(AppConfig):
    name = "cards"
    verbose_name = "Cards"

    def ready(self):
        from cards.reencryption import CARDS
        from core import reencryption

        reencryption.register(CARDS)
        from institutions.signals import institution_created

        institution_created.connect(_seed_card_products, dispatch_uid="cards.seed_products")


def _seed_card_products(sender, *, institution, **kwargs):
    from cards.services import card_products_seed

    card_products_seed(institution=institution)
