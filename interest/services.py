"""Writes of interest terms: a product's terms from a date (docs/interest.md, "Terms"), and an
account's override from a date to an optional end ("Overrides"), checked by the same code."""

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, AccountProduct
from core.exceptions import AlreadyExists, ValidationFailed
from core.money import MAX_AMOUNT
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.calendar import local_date

from .models import InterestTerms
from .rates import RATE_FORMAT, parse_rate, rate_text

MAX_TIERS = 10
# What a product's terms name (domain names), each required but the defaulted ones.
FIELDS = (
    "effective_date",
    "deposit_tiers",
    "tiering",
    "minimum_balance",
    "overdraft_rate",
    "day_count",
    "balance_method",
    "posting_frequency",
    "rounding",
    "negative_rates_allowed",
    "withholding_tax_rate",
)
DEFAULTS = {
    "tiering": InterestTerms.Tiering.WHOLE,
    "minimum_balance": 0,
    "overdraft_rate": "0",
    "balance_method": InterestTerms.BalanceMethod.DAILY,
    "posting_frequency": InterestTerms.PostingFrequency.MONTHLY,
    "rounding": InterestTerms.Rounding.HALF_EVEN,
    "negative_rates_allowed": False,
    "withholding_tax_rate": "0",
}
MINOR_UNITS = f"Must be an integer number of minor units from 0 to {MAX_AMOUNT}."


def interest_terms_data(terms: InterestTerms) -> dict:
    """The terms as their events record them and the API shows them (domain names): a
    product's name it, an account's override its account and end date."""
    owner = (
        {
            "account_id": terms.account_id,
            "end_date": terms.end_date.isoformat() if terms.end_date else None,
        }
        if terms.account_id
        else {"product_id": terms.product_id}
    )
    return {
        "id": terms.pk,
        **owner,
        "effective_date": terms.effective_date.isoformat(),
        "deposit_tiers": [dict(tier) for tier in terms.deposit_tiers],
        "tiering": terms.tiering,
        "minimum_balance": terms.minimum_balance,
        "overdraft_rate": rate_text(terms.overdraft_rate),
        "day_count": terms.day_count,
        "balance_method": terms.balance_method,
        "posting_frequency": terms.posting_frequency,
        "rounding": terms.rounding,
        "negative_rates_allowed": terms.negative_rates_allowed,
        "withholding_tax_rate": rate_text(terms.withholding_tax_rate),
        "created_at": iso_millis(terms.created_at),
    }


def _minor_units(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and 0 <= value <= MAX_AMOUNT


def _choice(values: dict, errors: dict, field: str, choices) -> None:
    if values[field] not in choices.values:
        errors[field] = f"Must be one of {', '.join(choices.values)}."


def _tiers_errors(tiers, negative_allowed: bool) -> tuple[dict, list]:
    """({path: message}, the tiers cleaned: `from_balance` int, `rate` its decimal string)."""
    if not isinstance(tiers, list) or not 1 <= len(tiers) <= MAX_TIERS:
        return {"deposit_tiers": f"Must be a list of 1 to {MAX_TIERS} tiers."}, []
    errors, cleaned, previous = {}, [], None
    for index, tier in enumerate(tiers):
        path = f"deposit_tiers.{index}"
        if not isinstance(tier, dict) or set(tier) != {"from_balance", "rate"}:
            errors[path] = "Must be an object of fromBalance and rate."
            continue
        start, rate = tier["from_balance"], parse_rate(tier["rate"])
        if not _minor_units(start):
            errors[f"{path}.from_balance"] = MINOR_UNITS
        elif index == 0 and start != 0:
            errors[f"{path}.from_balance"] = "The first tier starts at 0."
        elif previous is not None and start <= previous:
            errors[f"{path}.from_balance"] = "Must be above the previous tier's."
        else:
            previous = start
        if rate is None:
            errors[f"{path}.rate"] = RATE_FORMAT
        elif rate < 0 and not negative_allowed:
            errors[f"{path}.rate"] = "Must not be negative unless negativeRatesAllowed."
        else:
            cleaned.append({"from_balance": start, "rate": rate_text(rate)})
    return errors, cleaned


def interest_terms_errors(values: dict, *, today) -> tuple[dict, dict]:
    """({field: message}, the values cleaned) of a product's new terms (every field of FIELDS
    present, defaults applied). `today`: the institution's date now; a change never rewrites
    the past, so terms start today or later."""
    errors: dict[str, str] = {}
    cleaned = dict(values)
    day = values["effective_date"]
    if day is None:
        errors["effective_date"] = "This field is required."
    elif day < today:
        errors["effective_date"] = (
            f"Must be today ({today.isoformat()} at the institution) or later: terms never "
            "change the past."
        )
    negative = values["negative_rates_allowed"]
    if not isinstance(negative, bool):
        errors["negative_rates_allowed"] = "Must be true or false."
        negative = False
    if values["deposit_tiers"] is None:
        errors["deposit_tiers"] = "This field is required."
    else:
        tier_errors, cleaned["deposit_tiers"] = _tiers_errors(values["deposit_tiers"], negative)
        errors.update(tier_errors)
    _choice(values, errors, "tiering", InterestTerms.Tiering)
    if values["day_count"] is None:
        errors["day_count"] = "This field is required."
    else:
        _choice(values, errors, "day_count", InterestTerms.DayCount)
    _choice(values, errors, "balance_method", InterestTerms.BalanceMethod)
    if (
        values["balance_method"] == InterestTerms.BalanceMethod.AVERAGE_DAILY
        and values["posting_frequency"] == InterestTerms.PostingFrequency.AT_CLOSE
    ):
        # The average is over a posting period (interest.average): at_close has none.
        errors["balance_method"] = (
            "average_daily needs a posting period: postingFrequency monthly, quarterly or yearly."
        )
    _choice(values, errors, "posting_frequency", InterestTerms.PostingFrequency)
    _choice(values, errors, "rounding", InterestTerms.Rounding)
    if not _minor_units(values["minimum_balance"]):
        errors["minimum_balance"] = MINOR_UNITS
    for field in ("overdraft_rate", "withholding_tax_rate"):
        rate = parse_rate(values[field])
        if rate is None:
            errors[field] = RATE_FORMAT
        elif rate < 0:
            errors[field] = "Must not be negative."
        else:
            cleaned[field] = rate
    return errors, cleaned


def interest_terms_create(*, product: AccountProduct, **values) -> InterestTerms:
    """Give `product` interest terms from `effective_date` (today or later in the institution's
    time zone): the terms of every day from then until the next terms' date. Rates are decimal
    strings of percent per year. Another row of the product on that date: 409 `already_exists`
    (terms, once written, never change). Bad values: 400 `validation_error`, nothing written.
    Emits `interest_terms.created` with the terms."""
    return _terms_create({"product": product}, values, {}, "The product has terms")


def interest_override_create(*, account: Account, end_date=None, **values) -> InterestTerms:
    """Give `account` its own terms from `effective_date` (today or later, as a product's) to
    `end_date` (inclusive, after `effective_date`; None: until its next override): they replace
    its product's terms on those days (`interest.terms.terms_in_effect`). The same fields and
    rules as a product's terms (`interest_terms_errors`); another override of the account from
    that date: 409 `already_exists`. Emits `interest_terms.created` with the override."""
    errors = {}
    start = values.get("effective_date")
    if end_date is not None and start is not None and end_date <= start:
        errors["end_date"] = "Must be after effectiveDate."
    return _terms_create(
        {"account": account}, values, errors, "The account has an override", end_date=end_date
    )


def _terms_create(owner: dict, values: dict, errors: dict, taken: str, **extra) -> InterestTerms:
    """Terms of `owner` ({"product": ...} or {"account": ...}): checked (with `errors` found
    by the caller), written with `extra` model fields, their event emitted; `taken` begins the
    409's message."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(f"Not interest terms fields: {sorted(unknown)}")
    values = {field: values.get(field, DEFAULTS.get(field)) for field in FIELDS}
    [of] = owner.values()
    today = local_date(of.institution, timezone.now())
    terms_errors, cleaned = interest_terms_errors(values, today=today)
    errors = {**terms_errors, **errors}
    if errors:
        raise ValidationFailed(details=errors)
    terms = InterestTerms(institution=of.institution, **owner, **cleaned, **extra)
    with transaction.atomic(savepoint=False):
        try:
            with transaction.atomic():
                terms.save(force_insert=True)
        except IntegrityError as error:
            existing = InterestTerms.objects.filter(
                **owner, effective_date=cleaned["effective_date"]
            ).first()
            if existing is None:
                raise
            raise AlreadyExists(
                f"{taken} from this date already: terms never change; give another date.",
                details={"terms_id": existing.pk},
            ) from error
        emit_for(terms, "interest_terms.created", data={"terms": interest_terms_data(terms)})
    return terms
