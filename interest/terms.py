"""The terms of an account on a day (docs/interest.md, "Overrides"): its override, when one is in
effect, else its product's. One function, `terms_in_effect`, for the accrual job, the days'
calculation and whatever else asks.

- A product's terms on a day: the row with the latest `effective_date` on or before it.
- An account's override on a day: its override with the latest `effective_date` on or before
  it, unless that one's `end_date` is before the day. A later override replaces an earlier one
  from its date, whatever the earlier one's end; after the latest one's end the product's terms
  apply again.
"""

from datetime import date

from .models import InterestTerms


def terms_on(terms: list[InterestTerms], day: date) -> InterestTerms | None:
    """Of a product's terms (or an account's overrides) in effective date order, the ones with
    the latest effective date on or before `day`."""
    current = None
    for row in terms:
        if row.effective_date > day:
            break
        current = row
    return current


def terms_in_effect(
    product_terms: list[InterestTerms], overrides: list[InterestTerms], day: date
) -> InterestTerms | None:
    """The terms of an account on `day`: of its `overrides` (effective date order) the one in
    effect, else of its `product_terms` (effective date order); None, no terms."""
    override = terms_on(overrides, day)
    if override is not None and (override.end_date is None or day <= override.end_date):
        return override
    return terms_on(product_terms, day)


def overrides_by_account(**filters) -> dict[str, list[InterestTerms]]:
    """Overrides (`InterestTerms` rows with an account) matching `filters`, by account, each in
    effective date order. One query."""
    overrides: dict[str, list[InterestTerms]] = {}
    for row in InterestTerms.objects.filter(account__isnull=False, **filters).order_by(
        "account_id", "effective_date"
    ):
        overrides.setdefault(row.account_id, []).append(row)
    return overrides
