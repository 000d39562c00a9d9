"""What the payment-order tests share: a bank with an ACH profile and a key with every scope,
a customer's USD account loaded, external accounts through the API, and the rails' steps run
at an instant of the test's choosing (the cut-off, the simulated bank, the settlement)."""

from dataclasses import dataclass
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from accounts.models import Account
from core import operations
from core.actors import SYSTEM
from institutions import scopes
from payments.models import AchProfile, Rail
from payments.services.cutoff import cutoff_run
from payments.services.rails import rails_run
from sandbox.simulated_bank import simulated_bank_run
from tests.accounts.api.helpers import created, load
from tests.conftest import Api
from tests.customers.helpers import SPEC_FIELDS
from tests.factories import InstitutionFactory, issue_key

ZONE = "America/New_York"
USD_PRODUCT = {"code": "CBSFinancialContractTypeAPI", "name": "Checking (USD)", "currency": "USD"}


@dataclass
class Bank:
    api: Api
    institution: object
    profile: AchProfile
    customer_id: str
    account_id: str

    def external(self, account_number: str = "123456789", **fields) -> dict:
        body = {
            "customerId": self.customer_id,
            "holderName": "Ada Lovelace",
            "countryCode": "840",
            "currency": "USD",
            "ach": {
                "routingNumber": "021000021",
                "accountNumber": account_number,
                "accountType": "checking",
            },
            **fields,
        }
        return created(self.api.post("/external-accounts", body), "v2")

    def order(self, external_id: str, amount: int, direction: str = "credit", **fields):
        body = {
            "accountId": self.account_id,
            "externalAccountId": external_id,
            "direction": direction,
            "amount": amount,
            "currency": "USD",
            "rail": "ach",
            "secCode": "PPD",
            "description": "RENT",
            **fields,
        }
        return self.api.post("/payment-orders", body)

    def ordered(self, external_id: str, amount: int, direction: str = "credit", **fields) -> dict:
        return created(self.order(external_id, amount, direction, **fields), "v2")

    def balances(self) -> tuple[int, int, int]:
        account = Account.objects.get(pk=self.account_id)
        return account.posted, account.pending, account.available

    def get(self, order_id: str) -> dict:
        return self.api.get(f"/payment-orders/{order_id}").json()


def ach_bank(*, load_amount: int = 100_000, **profile) -> Bank:
    institution = InstitutionFactory(time_zone=ZONE, currency="USD")
    api = Api("v2", issue_key(institution, scopes=scopes.ALL)[1])
    rid = created(api.post("/products/accounts", USD_PRODUCT), "v2")["rid"]
    customer_id = created(api.post("/customers", SPEC_FIELDS), "v2")["customerId"]
    account = created(api.post("/accounts", {"customerId": customer_id, "productRid": rid}), "v2")
    if load_amount:
        load(api, account["accountId"], load_amount, currency="USD")
    ach = AchProfile.objects.create(
        institution=institution,
        odfi_routing_number="011000015",
        odfi_name="Sponsor Bank",
        destination_routing_number="011000015",
        destination_name="Federal Reserve",
        company_id="1234567890",
        company_name="TX Demo Bank",
        receiving_routing_number="026009593",
        **profile,
    )
    return Bank(api, institution, ach, customer_id, account["accountId"])


def local(day: date, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute, second), ZoneInfo(ZONE))


def cutoff(bank: Bank, day: date, window: str = "16:45", rail: str = Rail.ACH):
    return cutoff_run(profile=bank.profile, rail=rail, window_date=day, window=window)


def rails_at(instant: datetime):
    """The payments job as it would run at `instant`."""
    return operations.run_batches(rails_run, actor=SYSTEM, now=instant)


def bank_answers(bank: Bank, day: date) -> list[str]:
    return simulated_bank_run(institution=bank.institution, today=day)
