from accounts.models import Account, AccountProduct
from accounts.services import account_create, adjustment_create
from cards.models import Card, CardProduct
from cards.services import card_issue
from core import operations
from core.actors import SYSTEM
from core.management.base import TXCommand
from customers.models import Customer
from customers.services import customer_create
from institutions import scopes
from institutions.services import api_key_create, institution_create

DEMO_NAME = "TX Demo Bank"
DEMO_BALANCE = 100_000  # 1000.00 in the prepaid product's currency
DEMO_CUSTOMERS = [
    {"first_name": "Ada", "last_name": "Lovelace", "country_code": "826"},
    {"first_name": "Kwame", "last_name": "Mensah", "country_code": "288"},
    {
        "first_name": "Lena",
        "last_name": "Schmidt",
        "country_code": "276",
        "address": {
            "line1": "Unter den Linden 1",
            "line2": None,
            "city": "Berlin",
            "postal_code": "10117",
            "country_code": "276",
        },
    },
]


def _issue_demo_cards(institution) -> None:
    """An active virtual prepaid card on each demo account (databases seeded before card
    issuing get theirs on the next run)."""
    product = CardProduct.objects.get(institution=institution, code="PREPAID_STANDARD")
    accounts = Account.objects.filter(
        institution=institution,
        kind=Account.Kind.CUSTOMER,
        status=Account.Status.ACTIVE,
        product__kind=product.account_kind,
        currency=institution.currency,
    ).select_related("customer", "product")
    for account in accounts:
        card_issue(
            account=account,
            customer=account.customer,
            product=product,
            form=CardProduct.Form.VIRTUAL,
            status=Card.Status.ACTIVE,
        )


class Command(TXCommand):
    help = (
        "Seed a demo institution (account and card products, customers with a funded prepaid "
        "account and an active virtual card each) and print a new API key "
        "allowed from loopback. Safe to run again: each run adds only a new key."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print one line: {"institutionId", "keyId", "apiKey"}.',
        )

    def handle(self, *args, **options):
        with operations.operation(SYSTEM):  # one operation of the system: all of it or nothing
            institution, _ = institution_create(name=DEMO_NAME, currency="EUR")
            if not Customer.objects.filter(institution=institution).exists():
                prepaid = AccountProduct.objects.get(
                    institution=institution, code=AccountProduct.Code.PREPAID
                )
                for fields in DEMO_CUSTOMERS:
                    customer = customer_create(institution=institution, **fields)
                    account = account_create(
                        institution=institution,
                        customer=customer,
                        product=prepaid,
                        currency=prepaid.currency,
                    )
                    adjustment_create(
                        account=account,
                        direction="credit",
                        amount=DEMO_BALANCE,
                        currency=account.currency,
                        description="Demo load",
                        actor=SYSTEM,
                    )
            if not Card.objects.filter(institution=institution).exists():
                _issue_demo_cards(institution)
            # The sandbox key may do everything the README's walk-through and the Swagger UI
            # offer: the `full` role, the card network's side (authorizations, presentments,
            # returns) and full card details. It is usable from loopback only.
            issued = api_key_create(
                institution=institution,
                allow=["127.0.0.0/8", "::1/128"],
                role="full",
                scopes=[scopes.NETWORK, scopes.CARDS_SENSITIVE],
                name="demo",
                created_by="manage.py seed_demo",
            )
        if options["json"]:
            self.stdout.write(issued.json_line())
            return
        self.stdout.write(f"Institution: {institution.name} ({institution.id})")
        self.stdout.write(f"API key {issued.api_key.id}, allowed from 127.0.0.0/8 and ::1:")
        self.stdout.write(issued.secret)
