"""What the interest tests share: terms through the API, and a clock moved by hand so that money
is booked on the days a test computes by hand."""

from tests.accounts.api.helpers import created, resource

# A product's terms with every field given (docs/interest.md).
TERMS = {
    "effectiveDate": "2026-12-01",
    "depositTiers": [{"fromBalance": 0, "rate": "1.5"}, {"fromBalance": 500_000, "rate": "2.25"}],
    "tiering": "banded",
    "minimumBalance": 1_000,
    "overdraftRate": "9.9",
    "dayCount": "act_365f",
    "balanceMethod": "daily",
    "postingFrequency": "quarterly",
    "rounding": "half_up",
    "negativeRatesAllowed": False,
    "withholdingTaxRate": "26.375",
}


def post_terms(api, product_rid: str, **fields):
    return api.post(f"/products/accounts/{product_rid}/interest-rates", {**TERMS, **fields})


def terms_created(api, product_rid: str, **fields) -> dict:
    return created(post_terms(api, product_rid, **fields), api.version)


def days_of(api, account_id: str, first: str, last: str) -> dict:
    return resource(
        api.get(f"/accounts/{account_id}/interest/days", {"from": first, "to": last}), "v2"
    )
