"""Hostile input never reaches a 5xx (issue 10, part 4).

A catalogue of hostile requests goes to every write operation of both versions: each POST and
PATCH found by walking the URL resolver, plus v1's POST-as-PATCH aliases. Each operation has a
valid body (BODIES) built on real objects of one institution; the catalogue breaks it one way at
a time: encodings, JSON that Python's parser would take but RFC 8259 does not, every leaf of the
body replaced by the wrong type, an overlong string, control characters, huge or non-integer
numbers, odd headers and hostile path ids. Every case must answer its 4xx with the error body of
docs/design.md section 5 in the operation's version, and the database must be unchanged afterwards
(one query hashes every table). Last, the valid body itself is sent and must succeed: the
catalogue breaks bodies that would otherwise have passed.
"""

import json
import logging
import signal
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property

import pytest
from django.db import connection
from django.urls import URLResolver, get_resolver
from django.utils import timezone

from api.views import TXView
from customers.models import Customer
from institutions import scopes as api_scopes
from tests.conftest import Api
from tests.factories import issue_key
from tests.payments.helpers import (
    ach_profile,
    applied_collection,
    external_body,
    order_body,
    sepa_external_body,
    sepa_order_body,
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

PIN = "1357"
LOCAL_URL = "http://127.0.0.1:9000/hooks"
MERCHANT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}
AUTO = object()  # a fresh Idempotency-Key (v2) / none (v1)

# The 4xx codes of docs/design.md section 5's table, its business rules aside.
CLIENT_ERROR_CODES = {
    "validation_error",
    "idempotency_key_missing",
    "idempotency_key_invalid",
    "authentication_failed",
    "ip_not_allowed",
    "permission_denied",
    "not_found",
    "method_not_allowed",
    "idempotency_key_in_use",
    "invalid_state_transition",
    "payload_too_large",
    "unsupported_media_type",
    "idempotency_key_reused",
    "rate_limited",
}


# --- the operations -------------------------------------------------------------------------
@dataclass(frozen=True)
class Operation:
    version: str
    method: str  # the HTTP method sent
    handler: str  # the view method that answers ("patch" for v1's POST alias)
    route: str  # e.g. "cards/<id:cardId>/pin"
    view: type

    @property
    def key(self) -> tuple[str, str]:
        return (self.view.__name__, self.handler)

    def __str__(self) -> str:
        alias = " (alias of PATCH)" if self.handler != self.method.lower() else ""
        return f"{self.version} {self.method} /{self.route}{alias}"


def _walk(resolver, prefix=""):
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern, route)
        else:
            yield route, pattern


def write_operations() -> list[Operation]:
    operations = []
    for route, pattern in _walk(get_resolver()):
        view = getattr(pattern.callback, "view_class", None)
        if view is None or not issubclass(view, TXView) or not route.startswith("TX/"):
            continue
        version, route = route.split("/", 2)[1:]
        for method in ("post", "patch"):
            if hasattr(view, method):
                operations.append(Operation(version, method.upper(), method, route, view))
        if version == "v1" and hasattr(view, "patch") and not hasattr(view, "post"):
            operations.append(Operation(version, "POST", "patch", route, view))
    return operations


OPERATIONS = write_operations()


# --- the world the valid bodies point into ---------------------------------------------------
class World:
    """Real objects of one institution, made through the v2 API on first use."""

    def __init__(self, api: Api):
        self.api = api

    def _created(self, path, body) -> dict:
        response = self.api.post(path, body)
        assert response.status_code == 201, (path, response.content)
        return response.json()

    @cached_property
    def account_products(self) -> dict:
        listing = self.api.get("/products/accounts").json()["data"]
        return {product["code"]: product["rid"] for product in listing}

    @cached_property
    def card_products(self) -> dict:
        listing = self.api.get("/products/cards").json()["data"]
        return {product["bin"]: product["rid"] for product in listing}

    @property
    def prepaid_card_product(self) -> str:
        return self.card_products["400002"]  # prepaid, physical and virtual

    @property
    def debit_card_product(self) -> str:
        return self.card_products["400001"]

    def _customer(self, first_name: str) -> str:
        body = {"firstName": first_name, "lastName": "Lovelace", "countryId": "826"}
        return self._created("/customers", body)["customerId"]

    @cached_property
    def customer(self) -> str:
        return self._customer("Ada")

    @cached_property
    def customer2(self) -> str:
        return self._customer("Charles")

    def _account(self) -> dict:
        body = {
            "customerId": self.customer,
            "productRid": self.account_products["AccountPrepaidAPI"],
        }
        account = self._created("/accounts", body)
        load = {"direction": "credit", "amount": 1_000_000, "currency": account["currency"]}
        self._created(f"/accounts/{account['accountId']}/adjustments", load)
        return account

    @cached_property
    def account_body(self) -> dict:
        return self._account()

    @property
    def account(self) -> str:
        return self.account_body["accountId"]

    @cached_property
    def account2_body(self) -> dict:
        return self._account()

    @property
    def account2(self) -> str:
        return self.account2_body["accountId"]

    @cached_property
    def card(self) -> str:
        body = {
            "accountId": self.account,
            "customerId": self.customer,
            "cardProductRid": self.prepaid_card_product,
            "form": "physical",
            "deliveryAddress": address("v2"),
            "status": "active",
        }
        card_id = self._created("/cards", body)["cardId"]
        response = self.api.patch(f"/cards/{card_id}/pin", {"pin": PIN})
        assert response.status_code == 200, response.content
        return card_id

    @cached_property
    def pan(self) -> str:
        response = self.api.get(f"/cards/{self.card}/sensitive-details")
        assert response.status_code == 200, response.content
        return response.json()["pan"]

    @cached_property
    def hold(self) -> str:
        body = {"accountId": self.account, "amount": 500, "currency": "EUR"}
        return self._created("/holds", body)["holdId"]

    @cached_property
    def transfer(self) -> str:
        body = {
            "source": {"accountId": self.account},
            "destination": {"accountId": self.account2},
            "amount": 500,
            "currency": "EUR",
        }
        return self._created("/transfers", body)["transferId"]

    @cached_property
    def pending_transfer(self) -> str:
        """Two-phase, pending: what `PATCH /transfers/{transferId}` resolves."""
        body = {
            "source": {"accountId": self.account},
            "destination": {"accountId": self.account2},
            "amount": 500,
            "currency": "EUR",
            "hold": {"expiresAt": _in_a_day()},
        }
        return self._created("/transfers", body)["transferId"]

    @cached_property
    def authorization(self) -> str:
        body = {
            "cardId": self.card,
            "amount": 500,
            "currency": "EUR",
            "type": "Goods",
            "merchant": MERCHANT,
        }
        created = self._created("/card-authorizations", body)
        assert created["approved"], created
        return created["authorizationId"]

    @cached_property
    def presented(self) -> str:
        """A presented authorization of its own, to dispute (v2)."""
        body = {
            "cardId": self.card,
            "amount": 500,
            "currency": "EUR",
            "type": "Goods",
            "merchant": MERCHANT,
        }
        authorization = self._created("/card-authorizations", body)["authorizationId"]
        self._created(f"/card-authorizations/{authorization}/presentments", {})
        return authorization

    @cached_property
    def dispute(self) -> str:  # a draft (v2)
        return self._created("/disputes", dispute_body(self))["disputeId"]

    @cached_property
    def submitted_dispute(self) -> str:  # what the network answers about (v2)
        dispute = self._created("/disputes", dispute_body(self))["disputeId"]
        self._created(f"/disputes/{dispute}/transitions", {"to": "submitted"})
        return dispute

    @cached_property
    def rule(self) -> str:
        body = {
            "name": "Large payments",
            "kind": "amount_threshold",
            "action": "alert",
            "amount": 900_000,
            "currency": "EUR",
        }
        return self._created("/monitoring-rules", body)["ruleId"]

    @cached_property
    def endpoint(self) -> str:
        body = {"url": LOCAL_URL, "eventTypes": ["transfer.posted"]}
        return self._created("/webhook-endpoints", body)["endpointId"]

    @cached_property
    def program_funding_account(self) -> str:
        body = {"currency": "EUR", "direction": "credit", "amount": 10_000}
        self._created("/program-funding-accounts/adjustments", body)
        return self.api.get("/program-funding-accounts").json()["data"][0]["accountId"]

    @cached_property
    def decisioning_endpoint(self) -> str:
        body = {"url": LOCAL_URL, "timeoutMs": 200, "onFailure": "standin", "mode": "shadow"}
        return self._created("/decisioning-endpoints", body)["endpointId"]

    @cached_property
    def ach(self):
        """The institution's ACH profile: what payment orders need (set by staff, no API)."""
        return ach_profile(Customer.objects.get(pk=self.customer).institution)

    @cached_property
    def usd_account(self) -> str:
        return usd_account(self.api, self.customer)

    @cached_property
    def external_account(self) -> str:
        body = external_body(self.customer)
        return self._created("/external-accounts", body)["externalAccountId"]

    @cached_property
    def sepa(self):
        """The institution's SEPA profile: what SEPA orders need (set by staff, no API)."""
        return sepa_profile(
            Customer.objects.get(pk=self.customer).institution,
            creditor_identifier="DE98ZZZ09999999999",
        )

    @cached_property
    def sepa_external_account(self) -> str:
        body = sepa_external_body(self.customer, "FR14 2004 1010 0505 0001 3M02 606")
        body["countryCode"] = "250"
        return self._created("/external-accounts", body)["externalAccountId"]

    @cached_property
    def payment_order(self) -> str:
        assert self.ach
        body = order_body(self.usd_account, self.external_account)
        return self._created("/payment-orders", body)["paymentOrderId"]

    @cached_property
    def settled_sepa_order(self) -> str:
        """A `sepa_ct` order sent and settled (what a recall names), by the services."""
        assert self.sepa
        institution = Customer.objects.get(pk=self.customer).institution
        return sepa_settled_order(institution, self.account, self.sepa_external_account)

    @cached_property
    def inbound_recall(self) -> str:
        """Another bank's recall of its credit to the account, waiting for an answer."""
        assert self.sepa
        return waiting_recall(self.api, self.account)

    @cached_property
    def stop_payment(self) -> str:
        body = {"accountId": self.usd_account, "companyId": "1234509876"}
        return self._created("/stop-payments", body)["stopPaymentId"]

    @cached_property
    def mandate(self) -> str:
        assert self.sepa
        return self._created("/mandates", mandate_body(self.sepa_external_account, "HOSTILE-M0"))[
            "mandateId"
        ]

    @cached_property
    def debtor_mandate(self) -> str:
        path = f"/accounts/{self.account}/debtor-mandates"
        return self._created(path, debtor_mandate_body("HOSTILE-D0"))["debtorMandateId"]

    @cached_property
    def blocked_creditor(self) -> str:
        path = f"/accounts/{self.account}/blocked-creditors"
        return self._created(path, {"creditorIdentifier": CREDITOR_ID})["blockedCreditorId"]

    @cached_property
    def sepa_collection(self) -> str:
        """Another bank's creditor's direct debit of the account, paid (its institution put in
        the clearing)."""
        institution = Customer.objects.get(pk=self.customer).institution
        return applied_collection(institution, self.account).pk

    @cached_property
    def sepa_presented_collection(self) -> str:
        """Another bank's creditor's direct debit of the account, presented and waiting for its
        settlement date."""
        institution = Customer.objects.get(pk=self.customer).institution
        due = timezone.localdate() + timedelta(days=5)
        return applied_collection(
            institution,
            self.account,
            reference="HOSTILE-REFUSE",
            number=2,
            settles_on=due,
            settle=False,
        ).pk

    @cached_property
    def expected_payment(self) -> str:
        return self._created("/expected-payments", EXPECTED)["expectedPaymentId"]

    @cached_property
    def bank_statement(self) -> str:
        return self._created("/bank-statements", statement_body())["statementId"]

    def path_id(self, name: str) -> str:
        return getattr(
            self,
            {
                "customerId": "customer",
                "accountId": "account",
                "cardId": "card",
                "holdId": "hold",
                "transferId": "transfer",
                "authorizationId": "authorization",
                "disputeId": "dispute",
                "ruleId": "rule",
                "endpointId": "endpoint",
                "productRid": "prepaid_account_product",
                "cardProductRid": "prepaid_card_product",
                "externalAccountId": "external_account",
                "paymentOrderId": "payment_order",
                "stopPaymentId": "stop_payment",
                "inboundRecallId": "inbound_recall",
                "mandateId": "mandate",
                "debtorMandateId": "debtor_mandate",
                "blockedCreditorId": "blocked_creditor",
                "expectedPaymentId": "expected_payment",
                "inboundEntryId": "sepa_collection",
            }[name],
        )

    @property
    def prepaid_account_product(self) -> str:
        return self.account_products["AccountPrepaidAPI"]


# Money announced (docs/reconciliation.md, "Expected payments").
EXPECTED = {
    "currency": "EUR",
    "direction": "credit",
    "amountMin": 24_000,
    "amountMax": 26_000,
    "dateFrom": "2026-11-26",
    "dateTo": "2026-11-30",
    "reference": "Invoice 17",
    "endToEndId": "E2E-0001",
}


CREDITOR_ID = "DE98ZZZ09999999999"


def debtor_mandate_body(reference: str = "HOSTILE-D1") -> dict:
    return {"creditorIdentifier": CREDITOR_ID, "mandateReference": reference}


def mandate_body(external_id: str, reference: str = "HOSTILE-M1") -> dict:
    return {
        "externalAccountId": external_id,
        "mandateReference": reference,
        "signatureDate": "2026-01-15",
        "scheme": "CORE",
        "type": "recurrent",
    }


def address(version: str) -> dict:
    country = "countryId" if version == "v1" else "countryCode"
    return {
        "line1": "12 Crescent Road",
        "line2": "Flat 3",
        "city": "London",
        "postalCode": "SW1A 1AA",
        country: "826",
    }


def dispute_body(world) -> dict:
    return {
        "authorizationId": world.presented,
        "amount": 10,
        "reason": "not_received",
        "cardholderContactedAt": "2026-11-20T09:30:00.000Z",
        "note": "Parcel never came",
        "evidence": {
            "explanation": "Tracking shows it lost",
            "merchantContactedAt": "2026-11-19T10:00:00Z",
            "expectedAt": "2026-11-15",
            "cancelledAt": "2026-11-18T10:00:00Z",
            "duplicateOfTransactionId": "txn_0000000000000000000000000",
            "files": [{"name": "receipt.pdf", "reference": "doc-991"}],
        },
    }


def _in_a_day() -> str:
    return (timezone.now() + timedelta(days=1)).isoformat().replace("+00:00", "Z")


# A valid body for each write operation (keyed by view and handler), in the operation's version.
BODIES = {
    ("CustomerListView", "post"): lambda w, v: {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "countryId": "826",
        "email": "ada@example.com",
        "phone": "+447700900123",
        "dateOfBirth": "1990-05-17",
        "nationalId": "QQ123456C",
        "address": address(v),
    },
    ("CustomerDetailView", "patch"): lambda w, v: {
        "firstName": "Augusta Ada",
        "lastName": "King",
        "countryId": "826",
        "email": "ada@example.org",
        "phone": "+447700900124",
        "dateOfBirth": "1985-12-10",
        "nationalId": "QQ654321C",
        "address": address(v),
    },
    ("AccountListView", "post"): lambda w, v: {
        "customerId": w.customer,
        "productRid": w.account_products["AccountPrepaidAPI"],
        "currency": "EUR",
    },
    ("AccountDetailView", "patch"): lambda w, v: {"status": "frozen"},
    ("AccountAdjustmentsView", "post"): lambda w, v: {
        "direction": "credit",
        "amount": 1050,
        "currency": "EUR",
        "description": "Top-up",
    },
    ("AccountLookupView", "post"): lambda w, v: {"accountNumber": w.account_body["accountNumber"]},
    ("HoldListView", "post"): lambda w, v: {
        "accountId": w.account,
        "amount": 100,
        "currency": "EUR",
        "expiresAt": _in_a_day(),
        "reason": "Hotel deposit",
    },
    ("HoldDetailView", "patch"): lambda w, v: {"status": "released"},
    ("HoldCapturesView", "post"): lambda w, v: {"amount": 200},
    ("JointAccountView", "post"): lambda w, v: {
        "accountTypeRid": w.account_products["CBSFinancialContractTypeAPI"],
        "primaryCard": {
            "customerId": w.customer,
            "cardProductRid": w.debit_card_product,
            "form": "physical",
            "embossedName": "ADA LOVELACE",
            "deliveryAddress": address(v),
        },
        "secondaryCard": {
            "customerId": w.customer2,
            "cardProductRid": w.debit_card_product,
            "form": "virtual",
            "embossedName": "CHARLES BABBAGE",
        },
    },
    ("CardListView", "post"): lambda w, v: {
        "accountId": w.account,
        "customerId": w.customer,
        "cardProductRid": w.prepaid_card_product,
        "form": "physical",
        "embossedName": "ADA LOVELACE",
        "deliveryAddress": address(v),
        "status": "active",
    },
    ("CardLookupView", "post"): lambda w, v: {"pan": w.pan},
    ("CardDetailView", "patch"): lambda w, v: {"status": "suspended", "reason": "On request"},
    ("CardRenewalsView", "post"): lambda w, v: {"deliveryAddress": address(v)},
    ("CardReissuesView", "post"): lambda w, v: {
        "embossedName": "ADA KING",
        "reason": "Damaged",
        "deliveryAddress": address(v),
    },
    ("CardReplacementsView", "post"): lambda w, v: {
        "reason": "lost",
        "deliveryAddress": address(v),
    },
    ("CardSecuritySettingsView", "patch"): lambda w, v: {
        "ecommerce": True,
        "contactless": False,
        "atm": True,
        "international": False,
        "magstripe": False,
        "blockedMccs": ["5411", "7995"],
        "blockedCountries": ["840"],
    },
    ("CardLimitsView", "patch"): lambda w, v: {
        "perTransaction": 1000,
        "daily": 5000,
        "monthly": 20000,
        "dailyCash": 1000,
    },
    ("CardPinView", "patch"): lambda w, v: {"pin": "4821", "currentPin": PIN},
    ("CardPinVerificationsView", "post"): lambda w, v: {"pin": PIN},
    ("TransferListView", "post"): lambda w, v: {
        "source": {"accountId": w.account},
        "destination": {"accountId": w.account2},
        "amount": 100,
        "currency": "EUR",
        "description": "Rent",
        **({"reference": "rent-2026-01"} if v == "v2" else {}),  # v1 has no reference
    },
    # v2 only. `atomic`: an item that fails answers 422 (`independent` would answer 201).
    ("TransferBatchListView", "post"): lambda w, v: {
        "mode": "atomic",
        "transfers": [
            {
                "source": {"accountId": w.account},
                "destination": {"accountId": w.account2},
                "amount": 100,
                "currency": "EUR",
                "description": "Salary",
                "reference": "pay-2026-01-0001",
            }
        ],
    },
    ("TransferReversalsView", "post"): lambda w, v: {"amount": 10},
    ("TransferDetailView", "patch"): lambda w, v: {"status": "posted", "amount": 400},
    ("AuthorizationListView", "post"): lambda w, v: {
        "cardId": w.card,
        "amount": 100,
        "currency": "EUR",
        "type": "Goods",
        "merchant": dict(MERCHANT),
        "pin": PIN,
    },
    ("PresentmentsView", "post"): lambda w, v: {"amount": 500},
    ("ReversalsView", "post"): lambda w, v: {},
    ("IncrementsView", "post"): lambda w, v: {"amount": 100},  # v2 only
    ("ReturnListView", "post"): lambda w, v: {
        "cardId": w.card,
        "amount": 100,
        "currency": "EUR",
        "merchant": dict(MERCHANT),
    },
    ("MonitoringRuleListView", "post"): lambda w, v: {
        "name": "Night spending",
        "kind": "velocity_amount",
        "action": "decline",
        "enabled": True,
        "windowSeconds": 3600,
        "maxAmount": 50000,
        "currency": "EUR",
    },
    ("MonitoringRuleDetailView", "patch"): lambda w, v: {"name": "Renamed", "enabled": False},
    # Products the bank defines (v2 only, docs/products.md).
    ("AccountProductListCreateView", "post"): lambda w, v: {
        "code": "CBSFinancialContractTypeAPI",
        "name": "Current account (JPY)",
        "currency": "JPY",
        "allowsOverdraft": True,
        "maxOverdraftLimit": 100000,
    },
    ("AccountProductDetailView", "patch"): lambda w, v: {
        "name": "Renamed",
        "allowsOverdraft": True,
        "maxOverdraftLimit": 1000,
        "status": "retired",
    },
    # A product's interest terms (v2 only, docs/interest.md): from a day not yet passed anywhere.
    # Two integers only: the catalogue's "negative" falls on the second tier's (the first's is 0).
    # The settlement before a close (docs/interest.md): no fields.
    ("InterestSettlementsView", "post"): lambda w, v: {},
    ("InterestTermsView", "post"): lambda w, v: {
        "effectiveDate": (timezone.now() + timedelta(days=2)).date().isoformat(),
        "depositTiers": [{"fromBalance": 0, "rate": "1.5"}, {"fromBalance": 100, "rate": "2"}],
        "tiering": "banded",
        "overdraftRate": "9.9",
        "dayCount": "30_360",
        "balanceMethod": "daily",
        "postingFrequency": "monthly",
        "rounding": "half_even",
        "negativeRatesAllowed": False,
        "withholdingTaxRate": "25",
    },
    # An account's override (v2 only, docs/interest.md): the same, and its last day.
    ("InterestOverridesView", "post"): lambda w, v: {
        "effectiveDate": (timezone.now() + timedelta(days=2)).date().isoformat(),
        "endDate": (timezone.now() + timedelta(days=40)).date().isoformat(),
        "depositTiers": [{"fromBalance": 0, "rate": "1.5"}, {"fromBalance": 100, "rate": "2"}],
        "tiering": "banded",
        "overdraftRate": "9.9",
        "dayCount": "act_360",
        "balanceMethod": "average_daily",
        "postingFrequency": "quarterly",
        "rounding": "half_up",
        "negativeRatesAllowed": False,
        "withholdingTaxRate": "25",
    },
    # What terms would have cost (v2 only, docs/interest.md, "Previews"): two ended days.
    ("InterestPreviewView", "post"): lambda w, v: {
        "from": (timezone.now() - timedelta(days=3)).date().isoformat(),
        "to": (timezone.now() - timedelta(days=2)).date().isoformat(),
        "depositTiers": [{"fromBalance": 0, "rate": "1.5"}, {"fromBalance": 100, "rate": "2"}],
        "tiering": "banded",
        "overdraftRate": "9.9",
        "dayCount": "act_360",
    },
    ("CardProductListCreateView", "post"): lambda w, v: {
        "code": "TRAVEL",
        "name": "Travel",
        "kind": "prepaid",
        "forms": ["virtual", "physical"],
        "bin": "45678901",
        "panLength": 16,
        "validityMonths": 18,
        "defaultLimits": {"perTransaction": 100, "daily": 200, "monthly": 300, "dailyCash": 0},
        "defaultSecuritySettings": {
            "ecommerce": True,
            "contactless": False,
            "atm": True,
            "international": True,
            "magstripe": False,
            "blockedMccs": ["7995"],
            "blockedCountries": ["840"],
        },
    },
    ("CardProductDetailView", "patch"): lambda w, v: {
        "name": "Renamed",
        "forms": ["virtual"],
        "validityMonths": 12,
        "defaultLimits": {"daily": 5},
        "defaultSecuritySettings": {"ecommerce": False, "blockedMccs": ["6011"]},
        "status": "retired",
    },
    ("WebhookEndpointListView", "post"): lambda w, v: {
        "url": LOCAL_URL,
        "eventTypes": ["transfer.posted", "card.issued"],
        "enabled": True,
    },
    ("WebhookEndpointDetailView", "patch"): lambda w, v: {
        "url": LOCAL_URL + "/v2",
        "eventTypes": ["card.issued"],
        "enabled": False,
    },
    ("DecisioningEndpointListView", "post"): lambda w, v: {
        "url": LOCAL_URL,
        "timeoutMs": 500,
        "onFailure": "decline",
        "mode": "live",
        "cardProductRid": w.prepaid_card_product,
        "enabled": True,
    },
    ("DecisioningEndpointDetailView", "patch"): lambda w, v: {
        "url": LOCAL_URL + "/v2",
        "timeoutMs": 300,
        "onFailure": "approve",
        "mode": "live",
        "enabled": False,
    },
    ("SecretRotationView", "post"): lambda w, v: {"overlapSeconds": 3600},
    # Nothing listens there: the self-test answers 200 with `ok: false`.
    ("SelfTestView", "post"): lambda w, v: {},
    ("ProgramFundingAdjustmentsView", "post"): lambda w, v: {
        "currency": "EUR",
        "direction": "credit",
        "amount": 5_000,
        "description": "Prefunding",
    },
    ("ProgramFundingAccountDetailView", "patch"): lambda w, v: {"overdraftLimit": 10_000},
    ("ExternalAccountListView", "post"): lambda w, v: external_body(w.customer),
    ("ExternalAccountDetailView", "patch"): lambda w, v: {"holderName": "Ada King"},
    ("PrenoteView", "post"): lambda w, v: w.ach and {},
    ("PaymentOrderListView", "post"): lambda w, v: (
        w.ach
        and {
            **order_body(w.usd_account, w.external_account),
            "remittanceInfo": "Rent for January",
            "requestedExecutionDate": (timezone.now() + timedelta(days=7)).date().isoformat(),
        }
    ),
    ("CancellationsView", "post"): lambda w, v: {"reason": "Asked by the customer"},
    ("RecallsView", "post"): lambda w, v: {"reason": "CUST"},
    ("InboundRecallAnswersView", "post"): lambda w, v: {"accept": False, "reasonCode": "CUST"},
    ("StopPaymentListView", "post"): lambda w, v: {
        "accountId": w.usd_account,
        "companyId": "1234509876",
        "amount": 4_500,
        "expiresAt": _in_a_day(),
        "reason": "Cancelled the membership",
    },
    ("StopPaymentCancellationsView", "post"): lambda w, v: {"reason": "Asked by the customer"},
    ("MandateListView", "post"): lambda w, v: w.sepa and mandate_body(w.sepa_external_account),
    ("MandateDetailView", "patch"): lambda w, v: {"mandateReference": "HOSTILE-M2"},
    ("MandateCancellationsView", "post"): lambda w, v: {"reason": "Asked by the debtor"},
    ("DebtorMandateListView", "post"): lambda w, v: debtor_mandate_body(),
    ("DebtorMandateCancellationsView", "post"): lambda w, v: {"reason": "Asked by the customer"},
    ("InboundEntryRefundsView", "post"): lambda w, v: {"reason": "Not what I agreed"},
    ("InboundEntryRefusalsView", "post"): lambda w, v: {"reason": "I never bought this"},
    # Another creditor than the world's blocked one.
    ("BlockedCreditorListView", "post"): lambda w, v: {
        "creditorIdentifier": "IT66ZZZA1B2C3D4E5F6G7H8"
    },
    ("BlockedCreditorCancellationsView", "post"): lambda w, v: {"reason": "Agreed"},
    # A valid file of the bank's: a return of an entry TX never sent, kept for reconciliation.
    ("RailFileListView", "post"): lambda w, v: upload_body(
        unknown_return_file(w.ach, timezone.now().date())
    ),
    # A day's MT940 statement of the bank's (docs/reconciliation.md).
    ("BankStatementListView", "post"): lambda w, v: statement_body(),
    # A card network's day (docs/reconciliation.md, "Card settlement in"), its rows' ids of the
    # longest (64 characters): 10,000 rows of them are beyond the body's limit.
    ("NetworkSettlementListView", "post"): lambda w, v: settlement_body(prefix="N" * 63),
    ("ExpectedPaymentListView", "post"): lambda w, v: EXPECTED,
    ("ExpectedPaymentCancellationsView", "post"): lambda w, v: {},
    ("RuleListView", "post"): lambda w, v: {
        "name": "Batches by reference",
        "conditions": [
            {"field": "bank_reference", "operator": "equals"},
            {"field": "amount", "operator": "equals"},
        ],
        "cardinality": "one_to_many",
        "amountTolerance": 100,
        "dateWindowDays": 2,
    },
    ("ReconciliationListView", "post"): lambda w, v: {
        "statementId": w.bank_statement,
        "dryRun": False,
    },
    ("DisputeListView", "post"): lambda w, v: dispute_body(w),
    ("DisputeDetailView", "patch"): lambda w, v: {
        key: value for key, value in dispute_body(w).items() if key in ("note", "evidence")
    },
    ("TransitionsView", "post"): lambda w, v: {"to": "submitted", "reason": "Filed"},
    ("NetworkMessagesView", "post"): lambda w, v: {"type": "chargeback_accepted"},
}

# More valid bodies for operations whose fields depend on one another (a monitoring rule's
# parameters on its kind, a transfer's endpoint on how it names the account): only their leaves
# are broken (the rest of the catalogue is about the body as a whole).
VARIANTS = {
    ("MonitoringRuleListView", "post"): [
        lambda w, v: {
            "name": "Casinos",
            "kind": "blocked_mcc",
            "action": "decline",
            "mccs": ["7995", "5933"],
        },
        lambda w, v: {
            "name": "Embargo",
            "kind": "blocked_country",
            "action": "decline",
            "countries": ["408", "364"],
        },
        lambda w, v: {
            "name": "Risky",
            "kind": "amount_threshold",
            "action": "alert",
            "amount": 20000,
            "currency": "EUR",
            "riskLevel": "high",
        },
        lambda w, v: {
            "name": "Bursts",
            "kind": "velocity_count",
            "action": "alert",
            "windowSeconds": 60,
            "maxCount": 5,
        },
    ],
    ("MonitoringRuleDetailView", "patch"): [
        lambda w, v: {
            "amount": 800000,
            "currency": "EUR",
            "riskLevel": "medium",
            "action": "decline",
        },
    ],
    ("TransferListView", "post"): [
        lambda w, v: {
            "source": {"cardId": w.card},
            "destination": {"accountNumber": w.account2_body["accountNumber"]},
            "amount": 100,
            "currency": "EUR",
        },
        lambda w, v: {
            "source": {"pan": w.pan},
            "destination": {"accountId": w.account2},
            "amount": 100,
            "currency": "EUR",
        },
        # Two-phase (docs/two-phase-transfers.md).
        lambda w, v: {
            "source": {"accountId": w.account},
            "destination": {"accountId": w.account2},
            "amount": 100,
            "currency": "EUR",
            "hold": {"expiresAt": _in_a_day()},
        },
    ],
    ("TransferBatchListView", "post"): [
        lambda w, v: {
            "mode": "independent",
            "transfers": [
                {
                    "source": {"cardId": w.card},
                    "destination": {"accountNumber": w.account2_body["accountNumber"]},
                    "amount": 100,
                    "currency": "EUR",
                    "reference": "pay-2026-01-0002",
                }
            ],
        },
        lambda w, v: {
            "mode": "atomic",
            "transfers": [
                {
                    "source": {"pan": w.pan},
                    "destination": {"accountId": w.account2},
                    "amount": 100,
                    "currency": "EUR",
                }
            ],
        },
    ],
    ("AuthorizationListView", "post"): [
        lambda w, v: {
            "pan": w.pan,
            "amount": 100,
            "currency": "EUR",
            "type": "Cash",
            "merchant": {**MERCHANT, "mcc": "6011", "channel": "atm"},
            "pin": PIN,
        },
    ],
    ("ReturnListView", "post"): [
        lambda w, v: {
            "pan": w.pan,
            "amount": 100,
            "currency": "EUR",
            "merchant": {**MERCHANT, "channel": "ecommerce"},
        },
    ],
    # A SEPA external account (an IBAN and a BIC), and orders over SEPA to one: unstructured
    # remittance information, or a creditor reference.
    ("ExternalAccountListView", "post"): [lambda w, v: sepa_external_body(w.customer)],
    ("PaymentOrderListView", "post"): [
        lambda w, v: (
            w.sepa
            and sepa_order_body(
                w.account,
                w.sepa_external_account,
                endToEndId="HOSTILE-1",
                remittanceInfo="Invoice 42",
                requestedExecutionDate=(timezone.now() + timedelta(days=7)).date().isoformat(),
            )
        ),
        lambda w, v: (
            w.sepa
            and sepa_order_body(
                w.account,
                w.sepa_external_account,
                rail="sepa_inst",
                endToEndId="HOSTILE-2",
                creditorReference="RF18539007547034",
            )
        ),
    ],
}

# Operations whose path names another object than `World.path_id` does: a two-phase transfer
# is resolved while pending.
PATH_OVERRIDES = {
    ("TransferDetailView", "patch"): lambda w: {"transferId": w.pending_transfer},
    ("NetworkMessagesView", "post"): lambda w: {"disputeId": w.submitted_dispute},
    # A recall names a settled SEPA credit transfer.
    ("RecallsView", "post"): lambda w: {"paymentOrderId": w.settled_sepa_order},
    # A refusal names a direct debit not yet paid.
    ("InboundEntryRefusalsView", "post"): lambda w: {"inboundEntryId": w.sepa_presented_collection},
    # `accountId` names a customer's account elsewhere.
    ("ProgramFundingAccountDetailView", "patch"): lambda w: {
        "accountId": w.program_funding_account
    },
    # `endpointId` names a webhook endpoint elsewhere.
    **{
        (view, handler): lambda w: {"endpointId": w.decisioning_endpoint}
        for view, handler in (
            ("DecisioningEndpointDetailView", "patch"),
            ("SecretRotationView", "post"),
            ("SelfTestView", "post"),
        )
    },
}

# Operations for which no body at all (or `{}`) is a valid request: every field is optional.
EMPTY_IS_VALID = {
    ("ReversalsView", "post"),
    ("PresentmentsView", "post"),
    ("TransferReversalsView", "post"),
    ("HoldCapturesView", "post"),
    ("CardRenewalsView", "post"),
    ("CardReissuesView", "post"),
    ("CustomerDetailView", "patch"),
    ("SecretRotationView", "post"),
    ("SelfTestView", "post"),
    ("PrenoteView", "post"),
    ("CancellationsView", "post"),
    ("StopPaymentCancellationsView", "post"),
    ("MandateCancellationsView", "post"),
    ("DebtorMandateCancellationsView", "post"),
    ("InboundEntryRefundsView", "post"),
    ("InboundEntryRefusalsView", "post"),
    ("BlockedCreditorCancellationsView", "post"),
    ("ExpectedPaymentCancellationsView", "post"),
    ("InterestSettlementsView", "post"),
}


# Bodies declared larger than this answer 413 (MAX_BODY_BYTES), a transfer batch's larger than
# its own limit (MAX_BATCH_BODY_BYTES: up to 1,000 items).
BODY_LIMIT = 64 * 1024
BODY_LIMITS = {
    ("TransferBatchListView", "post"): 1024 * 1024,
    ("RailFileListView", "post"): 1024 * 1024,  # the bank's files, base64
    ("BankStatementListView", "post"): 1024 * 1024,  # the bank's statements, base64
    ("NetworkSettlementListView", "post"): 1024 * 1024,  # a network's day, its rows
}


def _reference_cases(item_path):
    """A reference is 1 to 100 characters (docs/transfer-batches.md)."""

    def cases(body):
        item = body
        for key in item_path:
            item = item[key]
        if "reference" not in item:  # v1: no reference (an unknown field, in json_cases)
            return []
        path = (*item_path, "reference")
        return [
            Case(f"{dotted(path)}: empty", dumps(replaced(body, path, ""))),
            Case(f"{dotted(path)}: 101 characters", dumps(replaced(body, path, "r" * 101))),
        ]

    return cases


def _batch_cases(body):
    item = body["transfers"][0]
    return [
        *_reference_cases(("transfers", 0))(body),
        Case("transfers: no item", dumps({**body, "transfers": []})),
        Case("transfers: 1,001 items", dumps({**body, "transfers": [item] * 1001})),
        Case("transfers: missing", dumps({"mode": body["mode"]})),
        Case("mode: missing", dumps({"transfers": body["transfers"]})),
        Case("mode: not a mode", dumps({**body, "mode": "all_or_nothing"})),
        Case("mode: upper case", dumps({**body, "mode": body["mode"].upper()})),
        Case("transfers[0]: empty object", dumps({**body, "transfers": [{}]})),
        Case(  # the second item broken, the first valid
            "transfers[1].amount: as string",
            dumps({**body, "transfers": [item, {**item, "amount": str(item["amount"])}]}),
        ),
    ]


# Cases of an operation's own rules that breaking its leaves one by one does not reach.
OWN_CASES = {
    ("TransferListView", "post"): _reference_cases(()),
    ("TransferBatchListView", "post"): _batch_cases,
}


# --- the catalogue ---------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    body: bytes
    status: int = 400
    code: str = "validation_error"
    content_type: str | None = "application/json"
    headers: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # WSGI environ overrides (CONTENT_LENGTH)
    path: str | None = None  # instead of the operation's path
    idempotency_key: object = AUTO
    api_key: str | None = None  # instead of the all-scopes key


def dumps(value) -> bytes:
    return json.dumps(value).encode()


NESTED_40 = json.loads("[" * 40 + "]" * 40)
DEEP = b"[" * 5000 + b"]" * 5000
TEN_K = "x" * 10_000
HOSTILE_KEYS = ["' OR 1=1 --", "x" * 10_000, str(uuid.uuid1())]

# Replacements for one leaf of a valid body, by the leaf's JSON type. Each makes the body invalid
# whatever the field (None is among them only for booleans: several other fields are nullable).
# Every leaf gets the CORE breakers of its type; the others go round the leaves of that type,
# so that each is sent at least once per operation without multiplying the requests.
STRING_CORE = [
    ("trailing newline", lambda s: s + "\n"),
    ("NUL inside", lambda s: s[:1] + "\x00" + s[1:]),
    ("10k characters", lambda s: TEN_K),
    ("number", lambda s: 276),
]
STRING_MORE = [
    ("trailing CRLF", lambda s: s + "\r\n"),
    ("leading newline", lambda s: "\n" + s),
    ("trailing NUL", lambda s: s + "\x00"),
    ("tab", lambda s: s[:1] + "\t" + s[1:]),
    ("DEL", lambda s: s + "\x7f"),
    ("C1 NEL", lambda s: s + "\x85"),
    ("escape sequence", lambda s: "\x1b[31m" + s),
    ("line separator", lambda s: s + "\u2028"),
    ("bidi override", lambda s: s[:1] + "\u202e" + s[1:]),
    ("lone high surrogate", lambda s: s + "\ud800"),
    ("lone low surrogate", lambda s: "\udc00" + s),
    ("object", lambda s: {"value": s}),
    ("float", lambda s: 1.5),
    ("boolean", lambda s: True),
    ("empty list", lambda s: []),
    ("list of it", lambda s: [s]),
    ("operator object", lambda s: {"$ne": None}),
    ("40 levels of lists", lambda s: NESTED_40),
]
INTEGER_CORE = [
    ("as string", lambda n: str(n)),
    ("as float", lambda n: float(n)),
    ("10**400", lambda n: 10**400),
]
INTEGER_MORE = [
    ("boolean", lambda n: True),
    ("fraction", lambda n: n + 0.5),
    ("negative zero float", lambda n: -0.0),
    ("negative", lambda n: -n),
    ("2**63", lambda n: 2**63),
    ("-(2**63)-1", lambda n: -(2**63) - 1),
    ("list", lambda n: [n]),
    ("object", lambda n: {"amount": n, "currency": "EUR"}),
    ("string with spaces", lambda n: f" {n} "),
]
# Raw JSON tokens for a number leaf, which json.dumps cannot write: (core, more).
RAW_CORE = ["NaN"]
RAW_MORE = [
    "1e400",
    "Infinity",
    "-Infinity",
    "-1e400",
    "1" * 5000,
    "1e3",
    "0x10",
    "01",
    "1.0e0",
    "-",
]
BOOLEAN_CORE = [("string", lambda b: "true"), ("one", lambda b: 1)]
BOOLEAN_MORE = [
    ("zero", lambda b: 0),
    ("null", lambda b: None),
    ("list", lambda b: [b]),
    ("object", lambda b: {"value": b}),
]
OBJECT_CORE = [("string", lambda d: "object"), ("unknown key", lambda d: {**d, "injected": "x"})]
OBJECT_MORE = [
    ("number", lambda d: 1),
    ("boolean", lambda d: False),
    ("list of it", lambda d: [d]),
    ("unknown nested key", lambda d: {**d, "__proto__": {"admin": True}}),
    ("40 levels deep", lambda d: {**d, "deep": NESTED_40}),
]
LIST_CORE = [("string", lambda items: "5411"), ("newline item", lambda i: [*i, f"{i[0]}\n"])]
LIST_MORE = [
    ("object", lambda items: {"0": items[0]}),
    ("nested list", lambda items: [items]),
    ("null item", lambda items: [*items, None]),
    ("number item", lambda items: [*items, 7995]),
    ("object item", lambda items: [*items, {"code": "5411"}]),
    ("NUL item", lambda items: [*items, "\x00"]),
    ("10k-character item", lambda items: [*items, TEN_K]),
]
BREAKERS = {  # JSON type: (core, more)
    "boolean": (BOOLEAN_CORE, BOOLEAN_MORE),
    "integer": (INTEGER_CORE, INTEGER_MORE),
    "string": (STRING_CORE, STRING_MORE),
    "object": (OBJECT_CORE, OBJECT_MORE),
    "list": (LIST_CORE, LIST_MORE),
}


def json_type(value) -> str:
    for name, kind in (("boolean", bool), ("integer", int), ("string", str), ("object", dict)):
        if isinstance(value, kind):
            return name
    assert isinstance(value, list), value
    return "list"


def leaves(value, path=()):
    """(path, value) of every member of every object inside `value` (the root excluded), and of
    every object in a list (a batch's items: `transfers[0]`, then `transfers[0].amount`...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), item
            if isinstance(item, dict):
                yield from leaves(item, (*path, key))
            elif isinstance(item, list):
                for index, element in enumerate(item):
                    if isinstance(element, dict):
                        yield (*path, key, index), element
                        yield from leaves(element, (*path, key, index))


def dotted(path) -> str:
    """A leaf's path in a case's name: `transfers[0].source.accountId`."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if text else key
    return text


def replaced(body, path, new):
    copy = json.loads(json.dumps(body))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return copy


MARK = "__HOSTILE_TOKEN__"


def with_raw(body, path, raw: bytes) -> bytes:
    """`body` as JSON text with the value at `path` replaced by raw bytes (not JSON-encodable)."""
    return dumps(replaced(body, path, MARK)).replace(f'"{MARK}"'.encode(), raw)


def leaf_cases(body) -> list[Case]:
    by_type: dict[str, list] = {}
    for path, value in leaves(body):
        by_type.setdefault(json_type(value), []).append((path, value))
    cases = []

    def add(path, name, new):
        cases.append(Case(f"{dotted(path)}: {name}", dumps(replaced(body, path, new))))

    for kind, members in by_type.items():
        core, more = BREAKERS[kind]
        for path, value in members:
            for name, breaker in core:
                add(path, name, breaker(value))
        for index, (name, breaker) in enumerate(more):
            path, value = members[index % len(members)]
            add(path, name, breaker(value))
        if kind == "integer":
            for path, _ in members:
                for raw in RAW_CORE:
                    cases.append(
                        Case(f"{dotted(path)}: raw {raw}", with_raw(body, path, raw.encode()))
                    )
            for index, raw in enumerate(RAW_MORE):
                path, _ = members[index % len(members)]
                cases.append(
                    Case(f"{dotted(path)}: raw {raw[:12]}", with_raw(body, path, raw.encode()))
                )
        if kind == "list":
            path, value = members[0]
            big = dumps(replaced(body, path, [value[0]] * 10_000))
            cases.append(Case(f"{dotted(path)}: 10k items", big, 413, "payload_too_large"))
    return cases


def encoding_cases(body) -> list[Case]:
    """Bytes that are not UTF-8 (or not only UTF-8) where a string of the body goes."""
    text_paths = [path for path, value in leaves(body) if isinstance(value, str)]
    if not text_paths:  # a body without strings: put them in a field of their own
        body, text_paths = {**body, "note": "x"}, [("note",)]
    path = text_paths[0]
    raw = {
        "latin-1 byte": b'"Zo\xeb"',
        "overlong slash": b'"\xc0\xaf"',
        "encoded surrogate": b'"\xed\xa0\x80"',
        "beyond U+10FFFF": b'"\xf4\x90\x80\x80"',
        "truncated sequence": b'"\xe2\x82"',
        "escaped lone surrogate": b'"\\ud800"',
        "escaped surrogate pair reversed": b'"\\udc00\\ud800"',
        "escaped NUL": b'"\\u0000"',
    }
    cases = [Case(f"encoding: {name}", with_raw(body, path, value)) for name, value in raw.items()]
    valid = dumps(body)
    text = json.dumps(body)
    cases += [
        Case("encoding: UTF-8 byte order mark", b"\xef\xbb\xbf" + valid),
        Case("encoding: UTF-16 body", text.encode("utf-16")),
        Case("encoding: UTF-32 body", text.encode("utf-32")),
        Case(
            "encoding: UTF-16 declared",
            text.encode("utf-16"),
            415,
            "unsupported_media_type",
            content_type="application/json; charset=utf-16",
        ),
        Case(
            "encoding: latin-1 declared",
            text.encode("latin-1", "replace"),
            415,
            "unsupported_media_type",
            content_type="application/json; charset=latin-1",
        ),
        Case(
            "encoding: unknown charset declared",
            valid,
            415,
            "unsupported_media_type",
            content_type="application/json; charset=klingon",
        ),
    ]
    return cases


def _fill(head: bytes, unit: bytes, size: int) -> bytes:
    return head + unit * ((size - len(head)) // len(unit))


# Bodies of `size` bytes a regex scan for JSON strings can go quadratic on: escaped quotes and no
# closing quote (each `"` starts a match that runs to the end), the same inside an object, and
# runs of backslashes and quotes.
SLOW = [
    ("escaped quotes, no closing quote", lambda size: _fill(b'"', b'\\"', size)),
    ("an object's string of escaped quotes", lambda size: _fill(b'{"a": "', b'\\"', size)),
    ("quote, backslash pairs", lambda size: _fill(b"", b'"\\', size)),
    ("open brackets and quotes", lambda size: _fill(b"", b'["', size)),
]


def json_cases(op_key, body) -> list[Case]:
    """JSON that Python's parser takes and RFC 8259 does not, and bodies of the wrong shape."""
    text = json.dumps(body)
    cases = [
        Case("json: 5000 levels of lists", DEEP),
        Case("json: 33 levels of objects", b'{"a":' * 33 + b"1" + b"}" * 33),
        Case("json: 40 levels under a field", dumps({**body, "deep": NESTED_40})),
        Case("json: null", b"null"),
        Case("json: top-level list", b"[]"),
        Case("json: top-level string", b'"hello"'),
        Case("json: NaN at the top", b"NaN"),
        Case("json: unterminated object", text[:-1].encode()),
        Case("json: trailing comma", (text[:-1] + ", }").encode() if body else b"{,}"),
        Case("json: two documents", (text + text).encode()),
        Case("json: comment", b"/* hi */" + dumps(body)),
        Case("json: single quotes", text.replace('"', "'").encode() if body else b"{'a': 1}"),
        Case("json: unknown field", dumps({**body, "injected": True})),
        Case("json: NUL key", dumps({**body, "\x00": 1})),
        Case("json: 10k-character key", dumps({**body, TEN_K: 1})),
        Case("json: lone surrogate key", dumps({**body, "\udfff": 1})),
    ]
    limit = BODY_LIMITS.get(op_key, BODY_LIMIT)
    cases.append(
        Case(f"json: {limit // 1024} KiB + 1", b" " * (limit + 1), 413, "payload_too_large")
    )
    # Bodies that made the depth pre-scan quadratic (issue 29), at the operation's limit.
    cases += [Case(f"json: {name}, {limit // 1024} KiB", hostile(limit)) for name, hostile in SLOW]
    if limit > BODY_LIMIT:  # under its own limit: read, and refused as the JSON it is not
        cases.append(Case(f"json: {BODY_LIMIT // 1024} KiB + 1", b" " * (BODY_LIMIT + 1)))
    if body:
        first = next(iter(body))
        duplicate = f"{{{json.dumps(first)}: {json.dumps(body[first])}, {text[1:]}"
        cases.append(Case("json: duplicate key", duplicate.encode()))
        if len(body) > 1 or not isinstance(body[first], dict):
            cases.append(
                Case(
                    "json: duplicate key, other value",
                    dumps(body)[:-1] + b', "' + first.encode() + b'": null}',
                )
            )
    else:
        cases.append(Case("json: duplicate key", b'{"a": 1, "a": 1}'))
    if op_key not in EMPTY_IS_VALID:
        cases += [
            Case("json: empty body", b""),
            Case("json: empty object", b"{}"),
            Case("json: Content-Length 0", dumps(body), meta={"CONTENT_LENGTH": "0"}),
        ]
    return cases


def header_cases(body) -> list[Case]:
    valid = dumps(body)
    media = [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=----x",
        "application/json-patch+json",
        "*/*",
        None,
    ]
    cases = [
        Case(f"content-type: {ctype!r}", valid, 415, "unsupported_media_type", content_type=ctype)
        for ctype in media
    ]
    cases += [
        Case(
            f"idempotency key: {key[:20]!r}",
            valid,
            400,
            "idempotency_key_invalid",
            idempotency_key=key,
        )
        for key in HOSTILE_KEYS
    ]
    cases += [
        Case(
            "x-api-key: 10k characters", valid, 401, "authentication_failed", api_key="k" * 10_000
        ),
        Case("x-api-key: NUL", valid, 401, "authentication_failed", api_key="tx_\x00abc"),
        Case("Content-Length: not a number", valid, meta={"CONTENT_LENGTH": "abc"}),
        Case(
            "Content-Length: huge",
            valid,
            413,
            "payload_too_large",
            meta={"CONTENT_LENGTH": str(10**12)},
        ),
        Case("Content-Length: half the body", valid, meta={"CONTENT_LENGTH": str(len(valid) // 2)}),
        Case("Content-Length: negative", valid, meta={"CONTENT_LENGTH": "-1"}),
    ]
    if not body:  # half of "{}" is "{": still invalid; nothing else to cut
        cases = [c for c in cases if c.name != "Content-Length: half the body"]
    return cases


HOSTILE_IDS = {
    "NUL": "%00",
    "id then NUL": "{real}%00",
    "id then newline": "{real}%0A",
    "encoded slash": "{real}%2Fx",
    "600 characters": "x" * 600,
    "41 characters": "c" * 41,
    "unicode": "caf%C3%A9",
    "emoji": "%F0%9F%92%B3",
    "invalid UTF-8": "%FF%FE",
    "space": "card%20x",
    "dot dot": "..",
    "quote": "x%27%20OR%201%3D1",
}


def id_cases(op: Operation, world: World, body) -> list[Case]:
    names = [part[len("<id:") : -1] for part in op.route.split("/") if part.startswith("<id:")]
    cases = []
    for name in names:
        real = world.path_id(name)
        for label, hostile in HOSTILE_IDS.items():
            path = fill(op.route, world, {name: hostile.format(real=real)})
            cases.append(Case(f"path {name}: {label}", dumps(body), 404, "not_found", path=path))
    return cases


def fill(route: str, world: World, overrides=None) -> str:
    parts = []
    for part in route.split("/"):
        if part.startswith("<id:"):
            name = part[len("<id:") : -1]
            part = (overrides or {}).get(name) or world.path_id(name)
        parts.append(part)
    return "/" + "/".join(parts)


def catalogue(op: Operation, world: World, body, variants=()) -> list[Case]:
    return [
        *encoding_cases(body),
        *json_cases(op.key, body),
        *header_cases(body),
        *leaf_cases(body),
        *(case for variant in variants for case in leaf_cases(variant)),
        *id_cases(op, world, body),
        *OWN_CASES.get(op.key, lambda body: [])(body),
    ]


# --- sending and checking ----------------------------------------------------------------------
def send(api: Api, op: Operation, case: Case, path: str):
    headers = {"x-api-key": case.api_key if case.api_key is not None else api.key}
    key = case.idempotency_key
    if key is AUTO:
        key = uuid.uuid4() if op.version == "v2" else None
    if key is not None:
        headers["Idempotency-Key"] = str(key)
    extra = dict(case.meta)
    if case.content_type is not None:
        extra["CONTENT_TYPE"] = case.content_type
    return api.client.generic(
        op.method,
        f"/TX/{op.version}{case.path or path}",
        data=case.body,
        content_type=case.content_type or "",
        headers=headers,
        **extra,
    )


def problem_with(response, version: str, case: Case) -> str | None:
    """What is wrong with the answer to `case`, or None."""
    if response.status_code != case.status:
        return f"status {response.status_code}, expected {case.status}: {response.content[:300]}"
    if response.get("Content-Type") != "application/json":
        return f"Content-Type {response.get('Content-Type')!r}"
    try:
        payload = response.json()
    except ValueError:
        return f"not JSON: {response.content[:200]}"
    if version == "v1":
        if set(payload) != {"error", "meta"} or set(payload["meta"]) != {"tranId", "timestamp"}:
            return f"not a v1 error body: {payload}"
        error = payload["error"]
    else:
        error = payload
    if not set(error) <= {"code", "message", "details"} or not {"code", "message"} <= set(error):
        return f"not an error body: {payload}"
    if not isinstance(error["message"], str) or error["code"] not in CLIENT_ERROR_CODES:
        return f"not an error body: {payload}"
    if "details" in error and not isinstance(error["details"], dict):
        return f"details is not an object: {payload}"
    if error["code"] != case.code:
        return f"code {error['code']!r}, expected {case.code!r}: {payload}"
    return None


# Tables whose rows a refused request may legitimately write: the cache (the rate limiter's
# counters live there), the rate limiter's own tables, and the job queue's bookkeeping.
_TABLES_SQL = r"""
    SELECT c.relname
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
       AND c.relname <> 'tx_cache'
       AND c.relname NOT LIKE 'api\_rate\_%' AND c.relname NOT LIKE '%ratelimit%'
       AND c.relname NOT LIKE 'procrastinate%'
     ORDER BY 1
"""


def snapshot_query() -> str:
    with connection.cursor() as cursor:
        cursor.execute(_TABLES_SQL)
        tables = [name for (name,) in cursor.fetchall()]
    quote = connection.ops.quote_name
    # Table names come from the catalogue, quoted as identifiers: no input reaches this SQL.
    return " UNION ALL ".join(
        f"SELECT '{name}', count(*) || ':' || md5(coalesce(string_agg(t::text, chr(10) "  # noqa: S608
        f"ORDER BY t::text), '')) FROM {quote(name)} AS t"
        for name in tables
    )


def snapshot(query: str) -> dict[str, str]:
    """Row count and a hash of the content of every table, in one query."""
    with connection.cursor() as cursor:
        cursor.execute(query)
        return dict(cursor.fetchall())


@pytest.fixture
def api_all(institution, settings, cached_keys):
    settings.RATE_LIMIT_REQUESTS = 0  # thousands of requests: the limiter is not under test
    # The keys of these tests do not change: each is read from the database once (cached_keys).
    # One access line per request is most of the cost of a refused request; errors still log.
    access_log = logging.getLogger("tx.access")
    level = access_log.level
    access_log.setLevel(logging.WARNING)
    yield Api("v2", issue_key(institution, scopes=api_scopes.ALL)[1])
    access_log.setLevel(level)


def test_every_write_operation_is_in_the_catalogue():
    keys = {op.key for op in OPERATIONS}
    assert set(VARIANTS) <= set(BODIES)
    assert keys == set(BODIES), (
        f"without a valid body: {sorted(keys - set(BODIES))}; stale: {sorted(set(BODIES) - keys)}"
    )
    # Both versions, POST and PATCH, and v1's aliases.
    assert {op.version for op in OPERATIONS} == {"v1", "v2"}
    assert any(op.method == "POST" and op.handler == "patch" for op in OPERATIONS)
    assert len(OPERATIONS) > 50


@pytest.mark.parametrize("op", OPERATIONS, ids=str)
def test_hostile_input_is_a_4xx_error_body_and_changes_nothing(op, api_all):
    world = World(api_all)
    api = Api(op.version, api_all.key)
    body = BODIES[op.key](world, op.version)
    variants = [variant(world, op.version) for variant in VARIANTS.get(op.key, ())]
    path = fill(op.route, world, PATH_OVERRIDES.get(op.key, lambda w: None)(world))
    cases = catalogue(op, world, body, variants)
    assert len(cases) >= 50

    query = snapshot_query()
    before = snapshot(query)
    failures = []
    for case in cases:
        response = send(api, op, case, path)
        problem = problem_with(response, op.version, case)
        if problem:
            failures.append(f"{case.name}: {problem}")
    after = snapshot(query)

    assert failures == [], f"{op}: {len(failures)} of {len(cases)} cases\n" + "\n".join(failures)
    changed = sorted(
        table for table in before.keys() | after.keys() if before.get(table) != after.get(table)
    )
    assert changed == [], f"{op}: refused requests changed {changed}"

    # The catalogue broke bodies that pass: the same bodies, untouched, succeed.
    for valid in [*variants, body]:
        response = send(api, op, Case("valid", dumps(valid)), path)
        assert 200 <= response.status_code < 300, (op, valid, response.content)
        if op.key == ("TransferBatchListView", "post"):  # 201 also when an item failed
            results = response.json()["results"]
            assert {result["status"] for result in results} == {"posted"}, (op, valid, results)


# --- the holes issue 10 names, one by one -----------------------------------------------------
CONTROL = "Must not contain control characters (such as NUL, tab or a line break)."


@pytest.fixture
def world(api_all):
    return World(api_all)


def validation_details(response, version: str) -> dict:
    assert problem_with(response, version, Case("", b"")) is None, response.content
    payload = response.json()
    return (payload["error"] if version == "v1" else payload)["details"]


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_pin_with_a_trailing_newline_is_refused(version, api_all, world):
    api = Api(version, api_all.key)
    card = world.card
    response = api.patch(f"/cards/{card}/pin", {"pin": "4821\n", "currentPin": PIN})
    assert validation_details(response, version) == {"pin": CONTROL}
    response = api.post(f"/cards/{card}/pin-verifications", {"pin": f"{PIN}\n"})
    assert validation_details(response, version) == {"pin": CONTROL}


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_codes_with_a_trailing_newline_are_refused(version, api_all, world):
    api = Api(version, api_all.key)
    body = BODIES[("AuthorizationListView", "post")](world, version)
    body["merchant"]["mcc"] = "5411\n"
    assert validation_details(api.post("/card-authorizations", body), version) == {
        "merchant.mcc": CONTROL
    }
    customer = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "840\n"}
    assert validation_details(api.post("/customers", customer), version) == {"countryId": CONTROL}
    customer = {**customer, "countryId": "840", "phone": "+14155550100\n"}
    assert validation_details(api.post("/customers", customer), version) == {"phone": CONTROL}


def test_every_pattern_matches_the_whole_string():
    """Without the control-character rule, the patterns alone refuse a trailing newline."""
    from cards.apis.serializers import MCC_RE, PAN_RE, PIN_RE
    from cards.services.issuance import EMBOSSED_NAME_RE
    from customers.apis import NATIONAL_ID_RE, PHONE_RE

    for pattern, valid in [
        (PIN_RE, "4821"),
        (PAN_RE, "4000020000000000"),
        (MCC_RE, "5411"),
        (PHONE_RE, "+4915112345678"),
        (NATIONAL_ID_RE, "AB123456"),
        (EMBOSSED_NAME_RE, "ADA LOVELACE"),
    ]:
        assert pattern.match(valid), pattern
        assert not pattern.match(valid + "\n"), pattern


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize(
    "name", ["Ada\nLovelace", "Ada\x00", "Ada\tLovelace", "Ada\x85", "Ada\u202eecalevoL"]
)
def test_names_with_control_characters_are_refused(version, name, api_all):
    api = Api(version, api_all.key)
    response = api.post("/customers", {"firstName": name, "lastName": "L", "countryId": "826"})
    assert validation_details(response, version) == {"firstName": CONTROL}


@pytest.mark.parametrize(
    ("given", "embossed"),
    [
        ("Zoë Strauß", "ZOE STRAUSS"),
        ("Łukasz Ørsted-Þór", "LUKASZ ORSTED-THOR"),
        ("  d'Artagnan  ", "D'ARTAGNAN"),
        ("J.R.R. TOLKIEN / 2", "J.R.R. TOLKIEN / 2"),
        ("ＡＤＡ", "ADA"),  # full-width letters are letters
    ],
)
def test_embossed_names_are_transliterated_into_the_track_1_set(api_all, world, given, embossed):
    body = {**BODIES[("CardListView", "post")](world, "v2"), "embossedName": given}
    response = api_all.post("/cards", body)
    assert response.status_code == 201, response.content
    assert response.json()["embossedName"] == embossed


@pytest.mark.parametrize(
    "given",
    ["李小龙", "ADA ❤", "ADA_LOVELACE", "ADA@BANK", "A", "A" * 27, "ß" * 14, "ADA\u0301\u0301X€"],
)
def test_embossed_names_a_card_cannot_carry_are_refused(api_all, world, given):
    body = {**BODIES[("CardListView", "post")](world, "v2"), "embossedName": given}
    response = api_all.post("/cards", body)
    assert validation_details(response, "v2").keys() == {"embossedName"}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b'{"a":' * 33 + b"1" + b"}" * 33, "Nested deeper than 32 levels."),
        (b"[" * 5000 + b"]" * 5000, "Nested deeper than 32 levels."),
        (b'{"amount": 1, "amount": 2}', 'Duplicate key "amount" in an object.'),
        (b'{"amount": NaN}', "NaN is not a JSON number."),
        (b'{"amount": Infinity}', "Infinity is not a JSON number."),
        (b'{"amount": -Infinity}', "-Infinity is not a JSON number."),
        (b'{"amount": 1e400}', "A number is too large."),
        (
            b'{"name": "\\ud800"}',
            "A string holds a lone surrogate (\\ud800-\\udfff), which is not text.",
        ),
        (b'{"name": "Zo\xeb"}', "The body is not UTF-8."),
        (b'\xef\xbb\xbf{"name": "Zoe"}', "A byte order mark is not allowed."),
    ],
)
def test_json_python_would_take_is_refused(api_all, raw, reason):
    response = api_all.post("/transfers", raw)
    assert validation_details(response, "v2") == {"body": reason}


@contextmanager
def deadline(seconds: float):
    """Fails the test when the block runs longer than `seconds`: a liveness bound, not a timing
    (the regex engine checks for signals as it runs, so even a scan holding the GIL stops)."""

    def expired(signum, frame):
        raise AssertionError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(("name", "hostile"), SLOW, ids=[name for name, _ in SLOW])
def test_bodies_that_made_the_scan_quadratic_are_refused_at_once(name, hostile, institution):
    """A `readonly` key reached the parser with 64 KiB (POST /account-lookups: 25 s of a worker
    before issue 29), a batch with 1 MiB (hours). Each is refused well within the bound; the
    previous scan fails it at 64 KiB already."""
    readonly = Api("v2", issue_key(institution, scopes=["read"])[1])
    batches = Api("v2", issue_key(institution, scopes=["money:write"])[1])
    for api, path, size in [
        (readonly, "/account-lookups", BODY_LIMIT),
        (batches, "/transfer-batches", BODY_LIMITS[("TransferBatchListView", "post")]),
    ]:
        with deadline(10):
            response = api.post(path, hostile(size))
        assert response.status_code == 400, (path, response.content)
        assert response.json()["code"] == "validation_error"


def test_nesting_up_to_32_levels_is_parsed(api_all):
    body = b'{"a":' * 31 + b"[1]" + b"}" * 31  # 32 levels: refused as a field, not as JSON
    assert validation_details(api_all.post("/transfers", body), "v2").keys() >= {"a"}


def test_an_integer_of_400_digits_is_a_range_error_of_its_field(api_all, world):
    body = {**BODIES[("TransferListView", "post")](world, "v2"), "amount": 10**400}
    details = validation_details(api_all.post("/transfers", body), "v2")
    assert details.keys() == {"amount"}


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_a_path_id_longer_than_any_id_is_404_and_stores_nothing(version, api_all):
    from api.models import IdempotencyRecord

    api = Api(version, api_all.key)
    for method in (api.post, api.patch):
        response = method("/customers/" + "c" * 600, {"firstName": "Ada"})
        assert problem_with(response, version, Case("", b"", 404, "not_found")) is None
    response = api.get("/customers/" + "c" * 41)
    assert problem_with(response, version, Case("", b"", 404, "not_found")) is None
    assert not IdempotencyRecord.objects.exists()
