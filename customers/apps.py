from django.apps import AppConfig


class CustomersConfig(AppConfig):
    name = "customers"
    verbose_name = "Customers"

    def ready(self):
        from core import reencryption
        from customers.reencryption import CUSTOMERS

        reencryption.register(CUSTOMERS)
