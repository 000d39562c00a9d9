"""A scope on every operation (docs/design.md section 3, docs/tenancy-and-keys.md).

The operations are not listed by hand: they are found by walking the URL resolver (every API view
of both versions, every method it answers, and v1's POST alias of PATCH), so an operation added
later is covered without touching this file. For each one, over HTTP:
- a key with every scope but the one it requires gets 403 `permission_denied`
  (`details.requiredScope`) and nothing in the database changes, although the request would
  have worked;
- a key with only that scope gets in (the request does what it asks).
Then the roles, what a body adds (a full PAN needs `cards:sensitive`; credit, fees and a return
that refunds no authorization need `money:adjust`), the migration of old keys, and the docs
table.
"""

import importlib
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounts.models import Account
from api.auth import required_scope
from api.views import TXView
from institutions import scopes
from institutions.calendar import local_date
from institutions.models import ApiKey
from payments.models import AchProfile
from tests.cards.api.helpers import product_rid
from tests.conftest import Api, body_of, error_of
from tests.factories import issue_key
from tests.payments.helpers import (
    ach_profile,
    applied_collection,
    external_body,
    inbound_credit_file,
    order_body,
    sepa_external_body,
    sepa_profile,
    sepa_settled_order,
    unknown_return_file,
    upload_body,
    usd_account,
    waiting_recall,
)
from tests.reconciliation.test_settlements import simple_body as settlement_body
from tests.reconciliation.test_statements import statement_body

pytestmark = pytest.mark.django_db

DOCS = Path(settings.BASE_DIR) / "docs" / "tenancy-and-keys.md"


# --- the operations, from the URL resolver ---------------------------------------------------
@dataclass(frozen=True)
class Operation:
    version: str
    method: str
    route: str  # "/cards/{cardId}/limits"
    view: type
    scope: str
    alias: bool = False  # v1's POST to a path that has only PATCH (api.views.TXView)

    @property
    def id(self) -> str:
        return f"{self.version} {self.method} {self.route}" + (" (alias)" if self.alias else "")


def _walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def operations() -> list[Operation]:
    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view = getattr(pattern.callback, "view_class", None)
        match = re.fullmatch(r"TX/(v[12])/(.*)", route)
        if match is None or view is None or not issubclass(view, TXView):
            continue  # the admin, and the schema and docs pages (not API operations)
        version, path = match.groups()
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", path)
        for method in ("get", "post", "patch"):
            if hasattr(view, method):
                scope = required_scope(view, method.upper())
                found.append(Operation(version, method.upper(), path, view, scope))
        if version == "v1" and hasattr(view, "patch") and not hasattr(view, "post"):
            found.append(Operation("v1", "POST", path, view, required_scope(view, "PATCH"), True))
    return found


OPERATIONS = operations()


def test_every_operation_names_one_known_scope():
    assert len(OPERATIONS) > 100  # both versions were found
    for operation in OPERATIONS:
        assert operation.scope in scopes.ALL, operation.id
    # The scopes a body adds are known ones too, and only writes have them.
    added = {(op.method, body.scope) for op in OPERATIONS for body in body_scopes_of(op)}
    assert {scope for _, scope in added} == {scopes.CARDS_SENSITIVE, scopes.MONEY_ADJUST}
    assert "GET" not in {method for method, _ in added}


def body_scopes_of(op: Operation) -> tuple:
    """What a body adds to the operation's scope (`institutions.scopes.BodyScope`)."""
    return getattr(op.view, "body_scopes", ()) if op.method != "GET" else ()


# --- a world to operate on: real ids everywhere ----------------------------------------------
MERCHANT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}


def made(response, version) -> dict:
    assert response.status_code in (200, 201), response.content
    return body_of(response, version)


class World:
    """Real objects to operate on, made over HTTP with a key that has every scope, each on
    first use (`world["card"]`): an operation pays only for what it names."""

    def __init__(self, version: str, institution):
        self.version = version
        self.institution = institution
        self.api = Api(version, issue_key(institution, scopes=scopes.ALL)[1])
        self._ids = {}

    def __getitem__(self, name):
        if name not in self._ids:
            self._ids[name] = getattr(self, f"_make_{name}")()
        return self._ids[name]

    def make(self, *names) -> None:
        """Make these now (before a snapshot, say)."""
        for name in names:
            self[name]

    def _post(self, path, body) -> dict:
        return made(self.api.post(path, body), self.version)

    def _customer_named(self, first):
        body = {"firstName": first, "lastName": "L", "countryId": "276"}
        return self._post("/customers", body)["customerId"]

    def _make_customer(self):
        return self._customer_named("Ada")

    def _make_customer2(self):
        return self._customer_named("Grace")

    def _make_accountProduct(self):  # noqa: N802
        return product_rid(self.api, "AccountPrepaidAPI", cards=False)

    def _make_cardProduct(self):  # noqa: N802
        return product_rid(self.api, "PREPAID_STANDARD")

    def _funded(self, holder):
        body = {"customerId": self[holder], "productRid": self["accountProduct"]}
        opened = self._post("/accounts", body)
        load = {"direction": "credit", "amount": 100_000, "currency": "EUR"}
        self._post(f"/accounts/{opened['accountId']}/adjustments", load)
        return opened

    def _make_account(self):
        opened = self._funded("customer")
        self._ids["accountNumber"] = opened["accountNumber"]
        return opened["accountId"]

    def _make_account2(self):
        return self._funded("customer2")["accountId"]

    def _make_accountNumber(self):  # noqa: N802
        self["account"]
        return self._ids["accountNumber"]

    def _make_card(self):
        body = {
            "accountId": self["account"],
            "customerId": self["customer"],
            "cardProductRid": self["cardProduct"],
            "form": "virtual",
            "status": "active",
        }
        card_id = self._post("/cards", body)["cardId"]
        made(self.api.patch(f"/cards/{card_id}/pin", {"pin": "4821"}), self.version)
        return card_id

    def _make_physical_card(self):
        body = {
            "accountId": self["account"],
            "customerId": self["customer"],
            "cardProductRid": self["cardProduct"],
            "form": "physical",
            "status": "active",
            "embossedName": "ADA L",
            "deliveryAddress": {
                "line1": "Unter den Linden 1",
                "city": "Berlin",
                "postalCode": "10117",
                ("countryId" if self.version == "v1" else "countryCode"): "276",
            },
        }
        return self._post("/cards", body)["cardId"]

    def _make_pan(self):
        return made(self.api.get(f"/cards/{self['card']}/sensitive-details"), self.version)["pan"]

    def _make_hold(self):
        body = {"accountId": self["account"], "amount": 500, "currency": "EUR"}
        return self._post("/holds", body)["holdId"]

    def _make_transfer(self):
        return self._post("/transfers", transfer_body(self))["transferId"]

    def _make_pending_transfer(self):
        """Two-phase, pending: what `PATCH /transfers/{transferId}` resolves."""
        body = {**transfer_body(self), "hold": {}}
        return self._post("/transfers", body)["transferId"]

    def _make_batch(self):
        return self._post("/transfer-batches", batch_body(self))["batchId"]

    def _make_authorization(self):
        """Presented, with its statement line."""
        authorization = self._post("/card-authorizations", authorization_body(self))
        self._ids["transaction"] = authorization["transactionId"]
        self._post(f"/card-authorizations/{authorization['authorizationId']}/presentments", {})
        return authorization["authorizationId"]

    def _make_transaction(self):
        self["authorization"]
        return self._ids["transaction"]

    def _make_pending_authorization(self):
        return self._post("/card-authorizations", authorization_body(self))["authorizationId"]

    def _make_increment(self):
        """v2: an approved increment of a pending authorization of its own (at a restaurant:
        not the grocery category a back-office world's monitoring rule alerts on)."""
        body = {**authorization_body(self), "merchant": {**MERCHANT, "mcc": "5812"}}
        authorization = self._post("/card-authorizations", body)
        path = f"/card-authorizations/{authorization['authorizationId']}"
        increment = self._post(f"{path}/increments", {"amount": 100})["incrementId"]
        self._post(f"{path}/presentments", {})  # no hold left active: a world's only is "hold"
        return increment

    def _make_disputable(self):
        """A presented authorization of its own, to dispute (at a restaurant, as the
        increment's: not the category a back-office world's monitoring rule alerts on)."""
        body = {**authorization_body(self), "merchant": {**MERCHANT, "mcc": "5812"}}
        authorization = self._post("/card-authorizations", body)
        path = f"/card-authorizations/{authorization['authorizationId']}"
        self._post(f"{path}/presentments", {})
        return authorization["authorizationId"]

    def _make_dispute(self):  # v2 only: a draft
        return self._post("/disputes", dispute_body(self))["disputeId"]

    def _make_submitted_dispute(self):  # v2 only: what the network answers about
        dispute_id = self._post("/disputes", dispute_body(self))["disputeId"]
        self._post(f"/disputes/{dispute_id}/transitions", {"to": "submitted"})
        return dispute_id

    def _make_return(self):
        return self._post("/card-returns", return_body(self))["returnId"]

    def _make_rule(self):
        body = {
            "name": "r",
            "kind": "velocity_count",
            "action": "alert",
            "windowSeconds": 60,
            "maxCount": 50,
        }
        return self._post("/monitoring-rules", body)["ruleId"]

    def _make_endpoint(self):
        body = {"url": "http://127.0.0.1:9/hooks", "eventTypes": ["*"]}
        return self._post("/webhook-endpoints", body)["endpointId"]

    def _make_decisioningEndpoint(self):  # noqa: N802 (v2 only)
        body = {"url": "http://127.0.0.1:9/decide", "timeoutMs": 200, "onFailure": "standin"}
        return self._post("/decisioning-endpoints", {**body, "mode": "shadow"})["endpointId"]

    def _make_programFundingAccount(self):  # noqa: N802 (v2 only)
        body = {"currency": "EUR", "direction": "credit", "amount": 10_000}
        self._post("/program-funding-accounts/adjustments", body)
        return self.api.get("/program-funding-accounts").json()["data"][0]["accountId"]

    def _make_ach(self):  # v2 only: the institution's ACH profile (staff set it, no API)
        return ach_profile(self.institution).pk

    def _make_usdAccount(self):  # noqa: N802 (v2 only)
        return usd_account(self.api, self["customer"])

    def _make_externalAccount(self):  # noqa: N802 (v2 only)
        body = external_body(self["customer"])
        return self._post("/external-accounts", body)["externalAccountId"]

    def _make_paymentOrder(self):  # noqa: N802 (v2 only)
        self["ach"]
        body = order_body(self["usdAccount"], self["externalAccount"])
        return self._post("/payment-orders", body)["paymentOrderId"]

    def _make_railFile(self):  # noqa: N802 (v2 only): a return of an entry TX never sent
        content = unknown_return_file(ach_profile_of(self), timezone.now().date())
        return self._post("/rail-files", upload_body(content))["fileId"]

    def _make_bankStatement(self):  # noqa: N802 (v2 only): a day's MT940 statement
        return self._post("/bank-statements", statement_body())["statementId"]

    def _make_networkSettlement(self):  # noqa: N802 (v2 only): a card network's day
        return self._post("/network-settlements", settlement_body())["settlementId"]

    def _make_expectedPayment(self):  # noqa: N802 (v2 only)
        return self._post("/expected-payments", expected_body())["expectedPaymentId"]

    def _make_reconciliation(self):  # v2 only: the day's statement matched
        answer = self._post("/reconciliations", {"statementId": self["bankStatement"]})
        return answer["reconciliationId"]

    def _make_reconciliationBreak(self):  # noqa: N802 (v2 only): the day's statement's fee
        query = {"reconciliationId": self["reconciliation"]}
        return self.api.get("/reconciliation-breaks", query).json()["data"][-1]["breakId"]

    def _make_inboundEntry(self):  # noqa: N802 (v2 only): another bank's credit, received
        number = Account.objects.get(pk=self["usdAccount"]).account_number
        content = inbound_credit_file(ach_profile_of(self), number, 100, timezone.now().date())
        self._post("/rail-files", upload_body(content, "credit.ach"))
        return self.api.get("/inbound-entries").json()["data"][0]["inboundEntryId"]

    def _make_inboundRecall(self):  # noqa: N802 (v2 only): a recall of a credit, waiting
        self["sepa"]
        return waiting_recall(self.api, self["account"])

    def _make_stopPayment(self):  # noqa: N802 (v2 only): a stop of a biller's debits
        body = {"accountId": self["usdAccount"], "companyId": "1234509876"}
        return self._post("/stop-payments", body)["stopPaymentId"]

    def _make_debtorMandate(self):  # noqa: N802 (v2 only): a mandate the customer holds
        body = {"creditorIdentifier": "DE98ZZZ09999999999", "mandateReference": "SCOPES-D0"}
        path = f"/accounts/{self['account']}/debtor-mandates"
        return self._post(path, body)["debtorMandateId"]

    def _make_blockedCreditor(self):  # noqa: N802 (v2 only): a creditor the customer blocks
        path = f"/accounts/{self['account']}/blocked-creditors"
        return self._post(path, {"creditorIdentifier": "DE98ZZZ09999999999"})["blockedCreditorId"]

    def _make_sepaCollection(self):  # noqa: N802 (v2 only): another bank's direct debit, paid
        return applied_collection(self.institution, self["account"]).pk

    def _make_sepaPresentedCollection(self):  # noqa: N802 (v2 only): one before its date
        due = timezone.localdate() + timedelta(days=5)
        return applied_collection(
            self.institution,
            self["account"],
            reference="SCOPES-REFUSE",
            number=2,
            settles_on=due,
            settle=False,
        ).pk

    def _make_sepa(self):  # v2 only: a SEPA profile that collects (staff set it, no API)
        return sepa_profile(self.institution, creditor_identifier="DE98ZZZ09999999999").pk

    def _make_sepaExternalAccount(self):  # noqa: N802 (v2 only)
        body = sepa_external_body(self["customer"])
        return self._post("/external-accounts", body)["externalAccountId"]

    def _make_mandate(self):  # v2 only: a SEPA direct debit mandate
        self["sepa"]
        body = mandate_body(self["sepaExternalAccount"], "SCOPES-M0")
        return self._post("/mandates", body)["mandateId"]

    def _make_settledSepaOrder(self):  # noqa: N802 (v2 only): a sepa_ct order settled
        self["sepa"]
        return sepa_settled_order(
            self.institution, self["account"], self["sepaExternalAccount"], amount=300
        )

    def _make_event(self):
        self["customer"]
        return self.api.get("/events", {"limit": 1}).json()["data"][0]["id"]

    def _make_overdraftProduct(self):  # noqa: N802 (v2 only)
        return self._post("/products/accounts", OVERDRAFT_PRODUCT)["rid"]

    def _make_overdraftAccount(self):  # noqa: N802 (v2 only)
        body = {"customerId": self["customer"], "productRid": self["overdraftProduct"]}
        return self._post("/accounts", body)["accountId"]


OVERDRAFT_PRODUCT = {
    "code": "CBSFinancialContractTypeAPI",
    "name": "Current account with overdraft",
    "currency": "EUR",
    "allowsOverdraft": True,
    "maxOverdraftLimit": 50_000,
}
CARD_PRODUCT = {
    "name": "Travel",
    "kind": "prepaid",
    "forms": ["virtual"],
    "bin": "45678901",
    "validityMonths": 24,
    "defaultLimits": {"perTransaction": 1, "daily": 2, "monthly": 3, "dailyCash": 0},
}


def mandate_body(external_id: str, reference: str) -> dict:
    return {
        "externalAccountId": external_id,
        "mandateReference": reference,
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
    }


def ach_profile_of(ids) -> AchProfile:
    ids["ach"]
    return AchProfile.objects.get(pk=ids.institution.pk)


def world(version: str, institution) -> World:
    return World(version, institution)


def transfer_body(ids, source=None, destination=None) -> dict:
    return {
        "source": source or {"accountId": ids["account"]},
        "destination": destination or {"accountId": ids["account2"]},
        "amount": 100,
        "currency": "EUR",
    }


def batch_body(ids, source=None, destination=None) -> dict:
    """v2 only: one transfer, `atomic` (a failing item answers 422, not a 201 that hides it)."""
    return {"mode": "atomic", "transfers": [transfer_body(ids, source, destination)]}


def authorization_body(ids, **card) -> dict:
    return {
        **(card or {"cardId": ids["card"]}),
        "amount": 1000,
        "currency": "EUR",
        "type": "Goods",
        "merchant": MERCHANT,
    }


def return_body(ids, **card) -> dict:
    return {
        **(card or {"cardId": ids["card"]}),
        "amount": 100,
        "currency": "EUR",
        "merchant": MERCHANT,
    }


def expected_body() -> dict:
    return {"currency": "EUR", "direction": "credit", "amount": 25_000, "reference": "Invoice 17"}


def dispute_body(ids) -> dict:
    return {
        "authorizationId": ids["disputable"],
        "amount": 10,
        "reason": "fraud",
        "cardholderContactedAt": "2026-11-20T09:30:00Z",
    }


# Path parameters: each names an object of the world.
PATH_IDS = {
    "disputeId": "dispute",
    "customerId": "customer",
    "accountId": "account",
    "holdId": "hold",
    "cardId": "card",
    "transferId": "transfer",
    "batchId": "batch",
    "transactionId": "transaction",
    "authorizationId": "authorization",
    "returnId": "return",
    "eventId": "event",
    "ruleId": "rule",
    "endpointId": "endpoint",
    "productRid": "accountProduct",
    "cardProductRid": "cardProduct",
    "externalAccountId": "externalAccount",
    "paymentOrderId": "paymentOrder",
    "fileId": "railFile",
    "statementId": "bankStatement",
    "settlementId": "networkSettlement",
    "expectedPaymentId": "expectedPayment",
    "breakId": "reconciliationBreak",
    "reconciliationId": "reconciliation",
    "inboundEntryId": "inboundEntry",
    "inboundRecallId": "inboundRecall",
    "stopPaymentId": "stopPayment",
    "mandateId": "mandate",
    "debtorMandateId": "debtorMandate",
    "blockedCreditorId": "blockedCreditor",
}
# Objects no request can make without staff, a rule firing or a fee schedule: a made-up id
# answers 404 after the scope check, which is all these tests need of them.
FAKE_IDS = {
    "alertId": "alert_0000000000000000000000000",
    "feeId": "fee_0000000000000000000000000",
    "month": "2026-01",
}


def path_of(operation: Operation, ids: dict) -> str:
    path = operation.route
    if operation.route in (
        "/card-authorizations/{authorizationId}/presentments",
        "/card-authorizations/{authorizationId}/reversals",
        "/card-authorizations/{authorizationId}/increments",
    ):
        path = path.replace("{authorizationId}", ids["pending_authorization"])
    if operation.route == "/transfers/{transferId}" and operation.method != "GET":
        path = path.replace("{transferId}", ids["pending_transfer"])
    if operation.route == "/cards/{cardId}/reissues":  # a new plastic: a physical card
        path = path.replace("{cardId}", ids["physical_card"])
    if operation.route in (
        "/accounts/{accountId}/statements",
        "/accounts/{accountId}/interest/days",
    ):  # `from` and `to` required
        path += "?from=2026-01-01&to=2026-01-31"
    if operation.route == "/fees":  # `accountId` required
        path += f"?accountId={ids['account']}"
    if operation.route == "/disputes/{disputeId}/network-messages":  # the network answers
        path = path.replace("{disputeId}", ids["submitted_dispute"])
    if operation.route == "/payment-orders/{paymentOrderId}/recalls":  # a settled transfer
        path = path.replace("{paymentOrderId}", ids["settledSepaOrder"])
    if operation.route == "/inbound-entries/{inboundEntryId}/refunds":  # a direct debit paid
        path = path.replace("{inboundEntryId}", ids["sepaCollection"])
    if operation.route == "/inbound-entries/{inboundEntryId}/refusals":  # one not yet paid
        path = path.replace("{inboundEntryId}", ids["sepaPresentedCollection"])
    if operation.route.startswith("/decisioning-endpoints/"):  # not a webhook endpoint
        path = path.replace("{endpointId}", ids["decisioningEndpoint"])
    if operation.route.startswith("/program-funding-accounts/"):  # not a customer's account
        path = path.replace("{accountId}", ids["programFundingAccount"])
    for name, value in FAKE_IDS.items():
        path = path.replace("{" + name + "}", value)
    return re.sub(r"\{(\w+)\}", lambda m: ids[PATH_IDS[m.group(1)]], path)


def body_of_write(method: str, route: str, ids) -> dict:
    """A body that works (with the scope), so that a refusal is what kept the change out."""

    def joint(ids):
        card = {"cardProductRid": ids["cardProduct"]}
        return {
            "primaryCard": {**card, "customerId": ids["customer"]},
            "secondaryCard": {**card, "customerId": ids["customer2"]},
        }

    bodies = {
        ("POST", "/customers"): lambda ids: {
            "firstName": "Kwame",
            "lastName": "M",
            "countryId": "288",
        },
        ("PATCH", "/customers/{customerId}"): lambda ids: {"email": "ada@example.com"},
        ("POST", "/accounts"): lambda ids: {
            "customerId": ids["customer"],
            "productRid": ids["accountProduct"],
        },
        ("PATCH", "/accounts/{accountId}"): lambda ids: {"status": "frozen"},
        ("POST", "/accounts/{accountId}/adjustments"): lambda ids: {
            "direction": "credit",
            "amount": 100,
            "currency": "EUR",
        },
        ("POST", "/account-lookups"): lambda ids: {"accountNumber": ids["accountNumber"]},
        ("POST", "/holds"): lambda ids: {
            "accountId": ids["account"],
            "amount": 100,
            "currency": "EUR",
        },
        ("PATCH", "/holds/{holdId}"): lambda ids: {"status": "released"},
        ("POST", "/holds/{holdId}/captures"): lambda ids: {"amount": 100},
        ("POST", "/cards"): lambda ids: {
            "accountId": ids["account"],
            "customerId": ids["customer"],
            "cardProductRid": ids["cardProduct"],
            "form": "virtual",
        },
        ("POST", "/joint-accounts"): joint,
        ("POST", "/cards/joint-account"): joint,
        ("POST", "/card-lookups"): lambda ids: {"pan": ids["pan"]},
        ("PATCH", "/cards/{cardId}"): lambda ids: {"status": "suspended"},
        ("POST", "/cards/{cardId}/renewals"): lambda ids: {},
        ("POST", "/cards/{cardId}/reissues"): lambda ids: {"reason": "damaged"},
        ("POST", "/cards/{cardId}/replacements"): lambda ids: {"reason": "lost"},
        ("PATCH", "/cards/{cardId}/security-settings"): lambda ids: {"ecommerce": False},
        ("PATCH", "/cards/{cardId}/limits"): lambda ids: {"daily": 150_000},
        ("PATCH", "/cards/{cardId}/pin"): lambda ids: {"pin": "1357", "currentPin": "4821"},
        ("POST", "/cards/{cardId}/pin-verifications"): lambda ids: {"pin": "4821"},
        ("POST", "/transfers"): transfer_body,
        ("POST", "/transfers/{transferId}/reversals"): lambda ids: {},
        ("PATCH", "/transfers/{transferId}"): lambda ids: {"status": "posted"},
        ("POST", "/transfer-batches"): batch_body,
        ("POST", "/card-authorizations"): authorization_body,
        ("POST", "/card-authorizations/{authorizationId}/presentments"): lambda ids: {},
        ("POST", "/card-authorizations/{authorizationId}/reversals"): lambda ids: {},
        ("POST", "/card-authorizations/{authorizationId}/increments"): lambda ids: {"amount": 100},
        # Refunding a presented authorization: a standalone return also needs money:adjust.
        ("POST", "/card-returns"): lambda ids: {
            **return_body(ids),
            "authorizationId": ids["authorization"],
        },
        ("POST", "/monitoring-rules"): lambda ids: {
            "name": "n",
            "kind": "blocked_mcc",
            "action": "decline",
            "mccs": ["7995"],
        },
        ("PATCH", "/monitoring-rules/{ruleId}"): lambda ids: {"action": "decline"},
        ("POST", "/webhook-endpoints"): lambda ids: {
            "url": "http://127.0.0.1:9/other",
            "eventTypes": ["*"],
        },
        ("PATCH", "/webhook-endpoints/{endpointId}"): lambda ids: {"enabled": False},
        ("POST", "/products/accounts"): lambda ids: {
            "code": "CBSFinancialContractTypeAPI",
            "name": "Current account (USD)",
            "currency": "USD",
        },
        ("PATCH", "/products/accounts/{productRid}"): lambda ids: {"name": "Renamed"},
        ("POST", "/accounts/{accountId}/interest/settlements"): lambda ids: {},
        ("POST", "/products/accounts/{productRid}/interest-rates"): lambda ids: {
            "effectiveDate": local_date(ids.institution, timezone.now()).isoformat(),
            "depositTiers": [{"fromBalance": 0, "rate": "1.5"}],
            "dayCount": "act_365f",
        },
        ("POST", "/accounts/{accountId}/interest-rates"): lambda ids: {
            "effectiveDate": local_date(ids.institution, timezone.now()).isoformat(),
            "depositTiers": [{"fromBalance": 0, "rate": "1.5"}],
            "dayCount": "act_365f",
        },
        ("POST", "/products/accounts/{productRid}/interest-previews"): lambda ids: {
            "from": (local_date(ids.institution, timezone.now()) - timedelta(days=2)).isoformat(),
            "to": (local_date(ids.institution, timezone.now()) - timedelta(days=1)).isoformat(),
            "depositTiers": [{"fromBalance": 0, "rate": "1.5"}],
            "dayCount": "act_365f",
        },
        ("POST", "/products/cards"): lambda ids: CARD_PRODUCT,
        ("PATCH", "/products/cards/{cardProductRid}"): lambda ids: {"name": "Renamed"},
        ("POST", "/decisioning-endpoints"): lambda ids: {
            "url": "http://127.0.0.1:9/decide",
            "timeoutMs": 500,
            "onFailure": "decline",
            "mode": "live",
        },
        ("PATCH", "/decisioning-endpoints/{endpointId}"): lambda ids: {"mode": "live"},
        ("POST", "/decisioning-endpoints/{endpointId}/secret-rotations"): lambda ids: {},
        ("POST", "/disputes"): dispute_body,
        ("PATCH", "/disputes/{disputeId}"): lambda ids: {"note": "Called twice"},
        ("POST", "/disputes/{disputeId}/transitions"): lambda ids: {"to": "submitted"},
        ("POST", "/disputes/{disputeId}/network-messages"): lambda ids: {
            "type": "chargeback_accepted"
        },
        ("POST", "/program-funding-accounts/adjustments"): lambda ids: {
            "currency": "EUR",
            "direction": "credit",
            "amount": 500,
        },
        ("PATCH", "/program-funding-accounts/{accountId}"): lambda ids: {"overdraftLimit": 100},
        # Nothing listens on port 9: the self-test answers 200 with `ok: false`.
        ("POST", "/decisioning-endpoints/{endpointId}/tests"): lambda ids: {},
        ("POST", "/external-accounts"): lambda ids: external_body(ids["customer"], "5550001"),
        ("PATCH", "/external-accounts/{externalAccountId}"): lambda ids: {"holderName": "A K"},
        ("POST", "/external-accounts/{externalAccountId}/prenotes"): lambda ids: ids["ach"] and {},
        ("POST", "/payment-orders"): lambda ids: (
            ids["ach"] and order_body(ids["usdAccount"], ids["externalAccount"], 200)
        ),
        ("POST", "/payment-orders/{paymentOrderId}/cancellations"): lambda ids: {},
        ("POST", "/payment-orders/{paymentOrderId}/recalls"): lambda ids: {"reason": "CUST"},
        ("POST", "/inbound-recalls/{inboundRecallId}/answers"): lambda ids: {
            "accept": False,
            "reasonCode": "CUST",
        },
        ("POST", "/stop-payments"): lambda ids: {
            "accountId": ids["usdAccount"],
            "companyId": "9876501234",
            "amount": 4_500,
        },
        ("POST", "/stop-payments/{stopPaymentId}/cancellations"): lambda ids: {},
        ("POST", "/mandates"): lambda ids: (
            ids["sepa"] and mandate_body(ids["sepaExternalAccount"], "SCOPES-M1")
        ),
        ("PATCH", "/mandates/{mandateId}"): lambda ids: {"mandateReference": "SCOPES-M2"},
        ("POST", "/mandates/{mandateId}/cancellations"): lambda ids: {},
        ("POST", "/inbound-entries/{inboundEntryId}/refunds"): lambda ids: {},
        ("POST", "/inbound-entries/{inboundEntryId}/refusals"): lambda ids: {},
        ("POST", "/accounts/{accountId}/debtor-mandates"): lambda ids: {
            "creditorIdentifier": "DE98ZZZ09999999999",
            "mandateReference": "SCOPES-D1",
        },
        (
            "POST",
            "/accounts/{accountId}/debtor-mandates/{debtorMandateId}/cancellations",
        ): lambda ids: {},
        ("POST", "/accounts/{accountId}/blocked-creditors"): lambda ids: {
            "creditorIdentifier": "IT66ZZZA1B2C3D4E5F6G7H8"
        },
        (
            "POST",
            "/accounts/{accountId}/blocked-creditors/{blockedCreditorId}/cancellations",
        ): lambda ids: {},
        # Another trace than the world's file: other bytes, another file.
        ("POST", "/bank-statements"): lambda ids: statement_body(b"other bytes\n"),
        # Another day than the world's settlement (a fresh one of its own: the day before).
        ("POST", "/network-settlements"): lambda ids: settlement_body(
            day=(timezone.now() - timedelta(days=2)).date()
        ),
        ("POST", "/expected-payments"): lambda ids: expected_body(),
        ("POST", "/expected-payments/{expectedPaymentId}/cancellations"): lambda ids: {},
        ("POST", "/reconciliation-rules"): lambda ids: {
            "name": "By end-to-end id",
            "conditions": [{"field": "end_to_end_id", "operator": "equals"}],
            "cardinality": "one_to_one",
        },
        ("POST", "/reconciliations"): lambda ids: {"statementId": ids["bankStatement"]},
        ("POST", "/rail-files"): lambda ids: upload_body(
            unknown_return_file(ach_profile_of(ids), timezone.now().date(), "091000010000998")
        ),
    }
    return bodies[(method, route)](ids)


def request_of(operation: Operation, ids) -> tuple[str, str, dict | None]:
    """(method, path, body), with every object it names made (before any snapshot)."""
    path = path_of(operation, ids)
    if operation.method == "GET":
        return "GET", path, None
    method = "PATCH" if operation.alias else operation.method
    return operation.method, path, body_of_write(method, operation.route, ids)


def send(api: Api, request):
    method, path, body = request
    if method == "GET":
        return api.get(path)
    return (api.patch if method == "PATCH" else api.post)(path, body)


# --- what "nothing changed" means: every row of the domain, hashed ---------------------------
DOMAIN_APPS = [
    "customers",
    "accounts",
    "cards",
    "transfers",
    "transactions",
    "authorizations",
    "events",
    "monitoring",
    "webhooks",
    "decisioning",
    "disputes",
    "interest",
    "payments",
    "reconciliation",
]


def _tables() -> list[str]:
    models = [m for label in DOMAIN_APPS for m in apps.get_app_config(label).get_models()]
    models += [
        apps.get_model("institutions", name) for name in ("Institution", "ApiKey", "AllowedNetwork")
    ]
    models.append(apps.get_model("api", "IdempotencyRecord"))
    tables = sorted({model._meta.db_table for model in models})
    return tables + (["procrastinate_jobs"] if "procrastinate_jobs" in _all_tables() else [])


def _all_tables() -> set[str]:
    return set(connection.introspection.table_names())


def snapshot() -> dict[str, tuple[int, str]]:
    """(row count, md5 of every row as JSON) per table, in one query: any insert, update or
    delete anywhere in the domain (balances, statuses, counters, events, jobs) changes it."""
    parts = [
        f"SELECT '{table}', count(*), md5(coalesce(string_agg(row_to_json(t)::text, '|' "  # noqa: S608 - names from the models
        f"ORDER BY row_to_json(t)::text), '')) FROM \"{table}\" t"
        for table in _tables()
    ]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts))
        return {table: (count, digest) for table, count, digest in cursor.fetchall()}


def assert_refused(response, version, scope):
    assert response.status_code == 403, response.content
    error = error_of(response, version)
    assert error["code"] == "permission_denied"
    assert error["details"] == {"requiredScope": scope}


# --- each operation, without its scope and with only its scope ------------------------------
# Operations that answer 4xx with only their scope, on the world as it is (never 403).
NOT_2XX_WITH_ONLY_ITS_SCOPE = {
    ("GET", "/monitoring-alerts/{alertId}"): 404,  # a made-up id: no rule fired
    ("GET", "/fees/{feeId}"): 404,  # a made-up id: no product of the world charges a fee
}


# Writes that change nothing even when they run: a decisioning endpoint's self-test calls the
# program and stores nothing, not even an idempotency record (docs/decisioning.md).
CHANGE_NOTHING = {("POST", "/decisioning-endpoints/{endpointId}/tests")}


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.id)
def test_operation_refused_without_its_scope_and_nothing_changes(operation, institution):
    ids = world(operation.version, institution)
    everything_but = [scope for scope in scopes.ALL if scope != operation.scope]
    denied = Api(operation.version, issue_key(institution, scopes=everything_but)[1])
    only = Api(operation.version, issue_key(institution, scopes=[operation.scope])[1])
    request = request_of(operation, ids)
    before = snapshot()
    assert_refused(send(denied, request), operation.version, operation.scope)
    assert snapshot() == before

    response = send(only, request)
    expected = NOT_2XX_WITH_ONLY_ITS_SCOPE.get((operation.method, operation.route))
    if expected is not None:
        assert response.status_code == expected, response.content
    else:
        assert response.status_code in (200, 201), response.content
    if operation.method != "GET" and expected is None:
        if (operation.method, operation.route) in CHANGE_NOTHING:
            assert snapshot() == before
        else:
            assert snapshot() != before  # the write the refused key was kept from


# --- roles -----------------------------------------------------------------------------------
def role_api(version, institution, role) -> Api:
    return Api(version, issue_key(institution, scopes=scopes.ROLES[role])[1])


def test_readonly_reads_and_writes_nothing(version, institution):
    ids = world(version, institution)
    readonly = role_api(version, institution, "readonly")
    assert readonly.get("/customers").status_code == 200
    assert readonly.get(f"/accounts/{ids['account']}/balances").status_code == 200
    ids.make("account2", "card")
    before = snapshot()
    assert_refused(
        readonly.post("/customers", {"firstName": "A", "lastName": "B", "countryId": "276"}),
        version,
        scopes.CUSTOMERS_WRITE,
    )
    assert_refused(readonly.post("/transfers", transfer_body(ids)), version, scopes.MONEY_WRITE)
    assert_refused(
        readonly.get(f"/cards/{ids['card']}/sensitive-details"), version, scopes.CARDS_SENSITIVE
    )
    assert snapshot() == before


def test_network_authorizes_but_cannot_move_money(version, institution):
    ids = world(version, institution)
    network = role_api(version, institution, "network")
    authorization = made(network.post("/card-authorizations", authorization_body(ids)), version)
    assert authorization["approved"] is True
    made(
        network.post(f"/card-authorizations/{authorization['authorizationId']}/presentments", {}),
        version,
    )
    refund = {**return_body(ids), "authorizationId": authorization["authorizationId"]}
    made(network.post("/card-returns", refund), version)
    ids.make("account2")
    before = snapshot()
    # A return that refunds no authorization is money given, not the network's to give.
    assert_refused(network.post("/card-returns", return_body(ids)), version, scopes.MONEY_ADJUST)
    assert_refused(network.post("/transfers", transfer_body(ids)), version, scopes.MONEY_WRITE)
    assert_refused(
        network.post(
            f"/accounts/{ids['account']}/adjustments",
            {"direction": "credit", "amount": 100, "currency": "EUR"},
        ),
        version,
        scopes.MONEY_ADJUST,
    )
    assert_refused(
        network.patch(f"/cards/{ids['card']}", {"status": "closed"}), version, scopes.CARDS_WRITE
    )
    assert snapshot() == before


def test_full_cannot_read_card_details_nor_play_the_network(version, institution):
    ids = world(version, institution)
    full = role_api(version, institution, "full")
    made(full.post("/transfers", transfer_body(ids)), version)
    ids.make("pan", "pending_authorization")
    before = snapshot()
    assert_refused(
        full.get(f"/cards/{ids['card']}/sensitive-details"), version, scopes.CARDS_SENSITIVE
    )
    assert_refused(full.post("/card-lookups", {"pan": ids["pan"]}), version, scopes.CARDS_SENSITIVE)
    for path, body in [
        ("/card-authorizations", authorization_body(ids)),
        ("/card-returns", return_body(ids)),
        (f"/card-authorizations/{ids['pending_authorization']}/presentments", {}),
        (f"/card-authorizations/{ids['pending_authorization']}/reversals", {}),
        *(
            [(f"/card-authorizations/{ids['pending_authorization']}/increments", {"amount": 1})]
            if version == "v2"
            else []
        ),
    ]:
        assert_refused(full.post(path, body), version, scopes.NETWORK)
    assert snapshot() == before


# --- a full PAN in the body needs cards:sensitive too ----------------------------------------
UNKNOWN_PAN = "4000000000000002"  # Luhn-valid, no card has it


@pytest.mark.parametrize(
    ("case", "scope"),
    [
        ("transfer_from_pan", scopes.MONEY_WRITE),
        ("transfer_to_pan", scopes.MONEY_WRITE),
        ("authorization", scopes.NETWORK),
        ("return", scopes.NETWORK),
    ],
)
def test_pan_in_the_body_needs_cards_sensitive(version, institution, case, scope):
    ids = world(version, institution)

    def request(api, pan):
        if case == "transfer_from_pan":
            return api.post("/transfers", transfer_body(ids, source={"pan": pan}))
        if case == "transfer_to_pan":
            destination = {"pan": pan}
            return api.post(
                "/transfers",
                transfer_body(ids, source={"accountId": ids["account2"]}, destination=destination),
            )
        if case == "authorization":
            return api.post("/card-authorizations", authorization_body(ids, pan=pan))
        refund = {**return_body(ids, pan=pan), "authorizationId": ids["authorization"]}
        return api.post("/card-returns", refund)

    # Every scope but cards:sensitive: refused, the same for a real and an unknown PAN (no
    # oracle), before anything is looked up or changed.
    without = Api(
        version, issue_key(institution, scopes=scopes.ROLES["full"] + [scopes.NETWORK])[1]
    )
    ids.make("pan", "account", "account2", "card", *(["authorization"] if case == "return" else []))
    before = snapshot()
    for pan in (ids["pan"], UNKNOWN_PAN):
        response = request(without, pan)
        assert_refused(response, version, scopes.CARDS_SENSITIVE)
    assert snapshot() == before

    # With it (and the operation's own scope): the PAN names the card.
    with_it = Api(version, issue_key(institution, scopes=[scope, scopes.CARDS_SENSITIVE])[1])
    made(request(with_it, ids["pan"]), version)
    assert snapshot() != before
    # cards:sensitive alone is not the operation's scope.
    alone = Api(version, issue_key(institution, scopes=[scopes.CARDS_SENSITIVE])[1])
    assert_refused(request(alone, ids["pan"]), version, scope)


@pytest.mark.parametrize("mode", ["atomic", "independent"])
@pytest.mark.parametrize("end", ["source", "destination"])
def test_pan_in_a_batch_item_needs_cards_sensitive(institution, mode, end):
    """The same rule for a transfer batch (v2 only): one item naming a `pan` (here the second,
    after an item by account id) makes the whole batch need `cards:sensitive`."""
    ids = world("v2", institution)

    def request(api, pan):
        if end == "source":
            item = transfer_body(ids, source={"pan": pan})
        else:
            item = transfer_body(
                ids, source={"accountId": ids["account2"]}, destination={"pan": pan}
            )
        return api.post(
            "/transfer-batches", {"mode": mode, "transfers": [transfer_body(ids), item]}
        )

    without = Api("v2", issue_key(institution, scopes=scopes.ROLES["full"] + [scopes.NETWORK])[1])
    ids.make("pan", "account", "account2", "card")
    before = snapshot()
    for pan in (ids["pan"], UNKNOWN_PAN):
        assert_refused(request(without, pan), "v2", scopes.CARDS_SENSITIVE)
    assert snapshot() == before

    with_it = Api(
        "v2", issue_key(institution, scopes=[scopes.MONEY_WRITE, scopes.CARDS_SENSITIVE])[1]
    )
    batch = made(request(with_it, ids["pan"]), "v2")
    assert [result["status"] for result in batch["results"]] == ["posted", "posted"]
    assert snapshot() != before
    alone = Api("v2", issue_key(institution, scopes=[scopes.CARDS_SENSITIVE])[1])
    assert_refused(request(alone, ids["pan"]), "v2", scopes.MONEY_WRITE)


# --- credit is money:adjust's (docs/tenancy-and-keys.md) ------------------------------------
# An overdraft limit, a product's overdraft cap or fee above 0, and a return that refunds no
# authorization need money:adjust on top of the operation's scope; 0 (no credit, no fee) does
# not. Each case: (versions, the operation's own scope, a request on the world's objects, and
# the same operation with 0 instead, or None).
FEE_FREE_PRODUCT = {**OVERDRAFT_PRODUCT, "name": "Fee-free", "maxOverdraftLimit": 0}
FEE_FREE_CARD_PRODUCT = {**CARD_PRODUCT, "bin": "45678902"}


def _patch(path_of_ids, fields):
    def build(ids):
        path = path_of_ids(ids)
        return ("PATCH", path, fields), ("PATCH", path, dict.fromkeys(fields, 0))

    return build


def _create(path, body, fields, zero_body):
    def build(ids):
        return ("POST", path, {**body, **fields}), (
            "POST",
            path,
            {**zero_body, **dict.fromkeys(fields, 0)},
        )

    return build


CARD_FEES = ("atmFee", "replacementFee", "foreignTransactionFeeBps")
CREDIT = {
    "account overdraftLimit": (
        ["v2"],
        scopes.ACCOUNTS_WRITE,
        _patch(lambda ids: f"/accounts/{ids['overdraftAccount']}", {"overdraftLimit": 20_000}),
    ),
    "new account product maxOverdraftLimit": (
        ["v2"],
        scopes.PRODUCTS_WRITE,
        _create(
            "/products/accounts",
            {**FEE_FREE_PRODUCT, "name": "Overdraft"},
            {"maxOverdraftLimit": 1},
            FEE_FREE_PRODUCT,
        ),
    ),
    "new account product monthlyFee": (
        ["v2"],
        scopes.PRODUCTS_WRITE,
        _create(
            "/products/accounts",
            {**FEE_FREE_PRODUCT, "name": "Monthly fee"},
            {"monthlyFee": 1},
            FEE_FREE_PRODUCT,
        ),
    ),
    "account product maxOverdraftLimit": (
        ["v2"],
        scopes.PRODUCTS_WRITE,
        _patch(
            lambda ids: f"/products/accounts/{ids['overdraftProduct']}",
            {"maxOverdraftLimit": 60_000},
        ),
    ),
    "account product monthlyFee": (
        ["v2"],
        scopes.PRODUCTS_WRITE,
        _patch(lambda ids: f"/products/accounts/{ids['overdraftProduct']}", {"monthlyFee": 500}),
    ),
    **{
        f"new card product {fee}": (
            ["v2"],
            scopes.PRODUCTS_WRITE,
            _create("/products/cards", CARD_PRODUCT, {fee: 1}, FEE_FREE_CARD_PRODUCT),
        )
        for fee in CARD_FEES
    },
    **{
        f"card product {fee}": (
            ["v2"],
            scopes.PRODUCTS_WRITE,
            _patch(lambda ids: f"/products/cards/{ids['cardProduct']}", {fee: 1}),
        )
        for fee in CARD_FEES
    },
    # A return of a presented authorization needs only `network` (the sweep above sends one).
    "standalone card return": (
        ["v1", "v2"],
        scopes.NETWORK,
        lambda ids: (("POST", "/card-returns", return_body(ids)), None),
    ),
}
CREDIT_CASES = [
    (case, version) for case, (versions, _, _) in CREDIT.items() for version in versions
]


@pytest.mark.parametrize(("case", "version"), CREDIT_CASES, ids=[" ".join(c) for c in CREDIT_CASES])
def test_credit_needs_money_adjust(institution, case, version):
    _, scope, build = CREDIT[case]
    ids = world(version, institution)
    request, zero = build(ids)  # what it names is made now, before the snapshot
    only = Api(version, issue_key(institution, scopes=[scope])[1])
    alone = Api(version, issue_key(institution, scopes=[scopes.MONEY_ADJUST])[1])
    both_scopes = Api(version, issue_key(institution, scopes=[scope, scopes.MONEY_ADJUST])[1])
    before = snapshot()

    # The operation's own scope only: refused before anything runs (no idempotency record).
    assert_refused(send(only, request), version, scopes.MONEY_ADJUST)
    # money:adjust alone is not the operation's scope.
    assert_refused(send(alone, request), version, scope)
    assert snapshot() == before

    # Both: it does what it asks.
    result = made(send(both_scopes, request), version)
    _, _, body = request
    assert {name: result[name] for name in body if name in result} == {
        name: value for name, value in body.items() if name in result
    }
    assert snapshot() != before

    # 0 lends and charges nothing: the operation's own scope takes the credit or the fee away
    # (or makes a product without).
    if zero is not None:
        _, _, zero_body = zero
        result = made(send(only, zero), version)
        credit = {name: value for name, value in zero_body.items() if value == 0}
        assert {name: result[name] for name in credit} == credit


# --- a replay by another key of the institution needs what the body added --------------------
@pytest.mark.parametrize(
    ("case", "version"),
    [(("transfer", "pan"), "v2"), (("transfer", "pan"), "v1"), *CREDIT_CASES[:2]],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_a_replay_by_another_key_needs_the_body_scopes_too(institution, case, version):
    """Idempotency records are the institution's: a second key that knows the first one's
    Idempotency-Key and body was answered the stored response without the scope the body needs
    (a full PAN, credit), skipping the check the first request passed."""
    ids = world(version, institution)
    if case == ("transfer", "pan"):
        ids.make("pan", "account", "account2", "card")
        request = ("POST", "/transfers", transfer_body(ids, source={"pan": ids["pan"]}))
        scope, added = scopes.MONEY_WRITE, scopes.CARDS_SENSITIVE
    else:
        _, scope, build = CREDIT[case]
        request, _ = build(ids)
        added = scopes.MONEY_ADJUST
    method, path, body = request
    key = uuid.uuid4()

    def send_with(api):
        write = api.patch if method == "PATCH" else api.post
        return write(path, body, idempotency_key=key)

    first = Api(version, issue_key(institution, scopes=[scope, added])[1])
    answer = send_with(first)
    made(answer, version)
    narrow = Api(version, issue_key(institution, scopes=[scope])[1])
    before = snapshot()
    assert_refused(send_with(narrow), version, added)
    assert snapshot() == before
    # A key that may send the body gets the replay, byte for byte.
    again = send_with(Api(version, issue_key(institution, scopes=[scope, added])[1]))
    assert (again.status_code, again.content) == (answer.status_code, answer.content)
    assert again["Idempotent-Replayed"] == "true"


# --- the migration of keys issued before scopes covered every operation ----------------------
def test_existing_keys_migrate_to_full_plus_what_they_had(institution):
    migration = importlib.import_module("api.migrations.0004_existing_keys_full_role")
    bare, _ = issue_key(institution, scopes=["read"])
    sensitive, sensitive_secret = issue_key(institution, scopes=["read"])
    ApiKey.objects.filter(pk=bare.pk).update(scopes=[])
    ApiKey.objects.filter(pk=sensitive.pk).update(scopes=["cards:sensitive"])

    # The models as that migration sees them (ApiKey was still in `api` then), same table.
    state = MigrationLoader(connection).project_state(("api", "0004_existing_keys_full_role"))
    migration.grant_full(state.apps, None)

    full = [
        "accounts:write",
        "cards:pin",
        "cards:write",
        "customers:write",
        "money:adjust",
        "money:write",
        "monitoring:write",
        "read",
        "webhooks:write",
    ]
    bare.refresh_from_db()
    sensitive.refresh_from_db()
    assert bare.scopes == full
    assert sensitive.scopes == sorted([*full, "cards:sensitive"])
    # Nothing breaks: what the key did before, it still does.
    api = Api("v2", sensitive_secret)
    assert api.get("/customers").status_code == 200
    assert (
        api.post("/customers", {"firstName": "A", "lastName": "B", "countryId": "276"}).status_code
        == 201
    )


# --- the table in docs/tenancy-and-keys.md ---------------------------------------------------
def expected_table() -> list[str]:
    """One row per (method, path): the scope, and which versions answer it."""
    rows: dict[tuple[str, str], dict] = {}
    for op in OPERATIONS:
        row = rows.setdefault(
            (op.route, op.method), {"scope": op.scope, "versions": set(), "alias": op.alias}
        )
        assert row["scope"] == op.scope, f"{op.id}: the versions disagree on the scope"
        row["versions"].add(op.version)
    lines = []
    for (route, method), row in sorted(rows.items()):
        if row["alias"]:
            versions = "v1 (alias of PATCH)"
        elif row["versions"] == {"v1", "v2"}:
            versions = "both"
        else:
            versions = " ".join(sorted(row["versions"])) + " only"
        added = [f"+ `{body.scope}` with {body.when}" for body in body_scopes_on(route, method)]
        scope = f"`{row['scope']}`" + (f" ({'; '.join(added)})" if added else "")
        lines.append(f"| {method} | `{route}` | {scope} | {versions} |")
    return lines


def body_scopes_on(route: str, method: str) -> tuple:
    for op in OPERATIONS:
        if op.route == route and op.method == method:
            return body_scopes_of(op)
    return ()


def documented_table() -> list[str]:
    text = DOCS.read_text()
    start = text.index("<!-- scopes-table:start -->")
    end = text.index("<!-- scopes-table:end -->")
    return [line for line in text[start:end].splitlines() if line.startswith("| ") and "`" in line]


def test_docs_table_lists_every_operation_with_its_scope():
    expected = expected_table()
    assert documented_table() == expected, "docs/tenancy-and-keys.md should read:\n" + "\n".join(
        expected
    )


# --- the OpenAPI documents -------------------------------------------------------------------
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_openapi_operations_carry_their_scope(version):
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator(api_version=version).get_schema(request=None, public=True)
    expected = {
        (f"/TX/{op.version}{op.route}", op.method.lower()): op
        for op in OPERATIONS
        if op.version == version
    }
    documented = {
        (path, method): operation
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "x-required-scope" in operation
    }
    assert set(documented) == set(expected)
    for key, operation in documented.items():
        op = expected[key]
        assert operation["x-required-scope"] == op.scope
        sentence = f"Requires scope `{op.scope}`."
        added = body_scopes_of(op)
        for body in added:
            sentence += f" Also requires `{body.scope}` with {body.when}."
        assert operation["description"].endswith(sentence), key
        assert operation.get("x-body-required-scopes") == (
            [{"scope": body.scope, "when": body.when} for body in added] or None
        )
    # Nothing else is documented as an operation but the schema and docs pages (no scope).
    others = {
        path
        for path, operations in document["paths"].items()
        for operation in operations.values()
        if "x-required-scope" not in operation
    }
    assert others <= {f"/TX/{version}/schema", f"/TX/{version}/docs"}
