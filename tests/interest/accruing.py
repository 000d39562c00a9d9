"""A small world of accounts earning and owing interest, for the accrual job's tests: money
booked by the ledger's own services over HTTP on the days the tests compute by hand (the clock
moved by hand, `Clock`), in an institution on UTC.

From 2027-03-01, act/365F, the whole balance at 3.65 % and overdrafts at 7.3 %:
- `a` holds 1,000 (minor units): 1,000 * 3.65 % / 365 = 0.1 a day;
- `b` holds 10,000: 1 a day;
- `c` (when asked for) holds 20,000: 2 a day.
"""

from datetime import UTC, datetime

from tests.accounts.api.helpers import adjust, create_customer, created

from .helpers import terms_created


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def accruing_world(api, *, three: bool = False, **terms) -> dict:
    """Made at the clock's now (2027-03-01 in UTC, before the day's end): the product, its
    terms (`terms`: API fields instead of those above), the accounts loaded. Returns
    {"terms": id, "a": id, "b": id[, "c": id]}."""
    rid = created(
        api.post(
            "/products/accounts",
            {
                "code": "CBSFinancialContractTypeAPI",
                "name": "Current account with interest",
                "currency": "EUR",
                "allowsOverdraft": True,
                "maxOverdraftLimit": 1_000_000,
            },
        ),
        "v2",
    )["rid"]
    world = {
        "terms": terms_created(
            api,
            rid,
            **{
                "effectiveDate": "2027-03-01",
                "dayCount": "act_365f",
                "tiering": "whole",
                "depositTiers": [{"fromBalance": 0, "rate": "3.65"}],
                "minimumBalance": 0,
                "overdraftRate": "7.3",
                **terms,
            },
        )["termsId"]
    }
    amounts = {"a": 1_000, "b": 10_000, **({"c": 20_000} if three else {})}
    for name, amount in amounts.items():
        body = {"customerId": create_customer(api), "productRid": rid}
        world[name] = created(api.post("/accounts", body), "v2")["accountId"]
        assert adjust(api, world[name], "credit", amount).status_code == 201
    assert api.patch(f"/accounts/{world['a']}", {"overdraftLimit": 500_000}).status_code == 200
    return world
