from accounts.models import Account, AccountProduct
from accounts.services import account_create, account_product_create, adjustment_create
from cards.models import Card, CardProduct
from cards.services import card_issue
from core import operations
from core.actors import SYSTEM
from core.management.base import TXCommand
from customers.models import Customer
from customers.services import customer_create
from institutions import scopes
from institutions.services import api_key_create, institution_create
from payments.models import AchProfile, SepaProfile
from payments.services.profiles import ach_profile_set, sepa_profile_set

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


# The demo's sponsor bank: the simulated bank that ships with TX (docs/payments.md). Routing
# numbers with valid check digits, none of them a real bank's business here.
DEMO_ACH_PROFILE = {
    "odfi_routing_number": "011000015",
    "odfi_name": "TX Simulated Bank",
    "destination_routing_number": "011000015",
    "destination_name": "TX Simulated Bank",
    "company_id": "1234567890",
    "company_name": "TX Demo Bank",
    "receiving_routing_number": "026009593",
    "same_day_cutoffs": ["10:30", "14:45"],
}


def _seed_ach(institution) -> None:
    """The ACH profile and a USD current account of the first demo customer, loaded, to pay
    out of and collect into (databases seeded before payment orders get theirs on the next
    run)."""
    ach_profile_set(institution=institution, **DEMO_ACH_PROFILE)
    product = account_product_create(
        institution=institution,
        code=AccountProduct.Code.CURRENT,
        name="Checking (USD)",
        currency="USD",
    )
    customer = Customer.objects.filter(institution=institution).order_by("id").first()
    account = account_create(
        institution=institution, customer=customer, product=product, currency="USD"
    )
    adjustment_create(
        account=account,
        direction="credit",
        amount=DEMO_BALANCE,
        currency="USD",
        description="Demo load",
        actor=SYSTEM,
    )


# The demo's SEPA partner bank: the simulated bank again, which answers the demo bank's pain.001
# files with pain.002 and camt.054 (docs/payments.md, "SEPA credit transfers through files").
# A BIC and an IBAN with valid check digits, neither a real bank's business here. Its accounts'
# IBANs are Luxembourg's under bank code 999 (docs/payments.md, "Inbound SEPA").
DEMO_SEPA_PROFILE = {
    "kind": SepaProfile.Kind.INITIATION,
    "bic": "TXSBDEFFXXX",
    "settlement_iban": "DE41370400440000000001",
    "iban_country": "LU",
    "iban_bank_code": "999",
}


def _seed_sepa(institution) -> None:
    """The SEPA profile and, when no active customer account holds EUR, a EUR current account
    of the first demo customer, loaded, to pay out of (databases seeded before SEPA files get
    theirs on the next run). The demo customers' prepaid accounts are in EUR, so usually the
    profile is all that is added."""
    sepa_profile_set(institution=institution, **DEMO_SEPA_PROFILE)
    if Account.objects.filter(
        institution=institution,
        kind=Account.Kind.CUSTOMER,
        status=Account.Status.ACTIVE,
        currency="EUR",
    ).exists():
        return
    product = AccountProduct.objects.filter(
        institution=institution, code=AccountProduct.Code.CURRENT, currency="EUR"
    ).first() or account_product_create(
        institution=institution,
        code=AccountProduct.Code.CURRENT,
        name="Current (EUR)",
        currency="EUR",
    )
    customer = Customer.objects.filter(institution=institution).order_by("id").first()
    account = account_create(
        institution=institution, customer=customer, product=product, currency="EUR"
    )
    adjustment_create(
        account=account,
        direction="credit",
        amount=DEMO_BALANCE,
        currency="EUR",
        description="Demo load",
        actor=SYSTEM,
    )


class Command(TXCommand):
    help = (
        "Seed a demo institution (account and card products, customers with a funded prepaid "
        "account and an active virtual card each, an ACH profile answered by the simulated "
        "bank and a funded USD account, an initiation SEPA profile answered by it too) and "
        "print a new API key allowed from loopback. Safe to run again: each run adds only a "
        "new key."
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
            if not AchProfile.objects.filter(institution=institution).exists():
                _seed_ach(institution)
            if not SepaProfile.objects.filter(institution=institution).exists():
                _seed_sepa(institution)
            # The sandbox key may do everything the README's walk-through and the Swagger UI
            # offer: the `full` role, the card network's side (authorizations, presentments,
            # returns), full card details, payment orders and the sponsor bank's side. It is
            # usable from loopback only.
            issued = api_key_create(
                institution=institution,
                allow=["127.0.0.0/8", "::1/128"],
                role="full",
                scopes=[
                    scopes.NETWORK,
                    scopes.CARDS_SENSITIVE,
                    scopes.PAYMENTS_WRITE,
                    scopes.BANK,
                ],
                name="demo",
                created_by="manage.py seed_demo",
            )
        if options["json"]:
            self.stdout.write(issued.json_line())
            return
        self.stdout.write(f"Institution: {institution.name} ({institution.id})")
        self.stdout.write(f"API key {issued.api_key.id}, allowed from 127.0.0.0/8 and ::1:")
        self.stdout.write(issued.secret)
