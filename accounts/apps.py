from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        from institutions.signals import institution_created

        institution_created.connect(_seed_account_products, dispatch_uid="accounts.seed_products")


def _seed_account_products(sender, *, institution, **kwargs):
    from accounts.services import account_products_seed

    account_products_seed(institution=institution)
