"""`POST /products/accounts/{rid}/interest-previews`: what proposed terms would have cost over a
product's accounts, beside the terms in effect, from history; v2 only, writes nothing
(docs/interest.md, "Previews")."""

from fractions import Fraction

from django.core.validators import RegexValidator
from django.utils import timezone
from rest_framework import serializers

from accounts.selectors import account_product_get
from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictDateField
from api.versions import V2
from api.views import TXView
from core.exceptions import ValidationFailed
from core.ids import IdConverter
from institutions import scopes
from institutions.calendar import local_date

from ..calculation import PLACES
from ..models import InterestTerms
from ..previews import MAX_ACCOUNT_DAYS, MAX_AVERAGE_ACCOUNT_DAYS, interest_preview
from ..selectors import MAX_DAYS
from ..services import DEFAULTS, FIELDS, interest_terms_errors
from .days import check_span, decimal_text, fraction_text
from .terms import InterestTermsCreate


class InterestPreviewCreate(InterestTermsCreate):
    """The body of POST .../interest-rates without `effectiveDate` (the proposed terms are the
    product's from the span's first day; sending it is 400, "Unknown field"), and the span."""

    effectiveDate = None  # noqa: N815
    after = StrictCharField(
        required=False,
        max_length=40,
        validators=[RegexValidator(f"^{IdConverter.regex}$", "Must be an account id.")],
        help_text="The previous page's `nextAfter`: this page starts after that account.",
    )


# `from` is a Python keyword: the field is declared by name.
InterestPreviewCreate._declared_fields["from"] = StrictDateField(
    help_text="The first day (the institution's date)."
)
InterestPreviewCreate._declared_fields["to"] = StrictDateField(
    help_text=f"The last day, inclusive: a day that has ended at the institution; {MAX_DAYS} "
    "days at most."
)


def _totals(name: str) -> serializers.CharField:
    return serializers.CharField(
        help_text=f"{name} (minor units, {PLACES} decimal places, half even)."
    )


def _exact(name: str) -> serializers.CharField:
    return serializers.CharField(help_text=f'{name}, exact: "numerator/denominator".')


class KindPreview(Serializer):
    current = _totals("Accrued under the terms in effect each day")
    currentExact = _exact("The same")  # noqa: N815
    proposed = _totals("What the proposed terms would have accrued")
    proposedExact = _exact("The same")  # noqa: N815
    difference = _totals("proposed - current")
    differenceExact = _exact("The same")  # noqa: N815


class InterestPreviewSerializer(Serializer):
    productRid = serializers.CharField()  # noqa: N815
    currency = serializers.CharField()
    days = serializers.IntegerField(help_text="Days of the span.")
    accounts = serializers.IntegerField(help_text="The product's accounts in this page.")
    deposit = KindPreview()
    overdraft = KindPreview()
    nextAfter = serializers.CharField(  # noqa: N815
        allow_null=True,
        help_text="More accounts follow: send it as `after` for the next page; null: the last.",
    )


def _kind(preview, kind: str) -> dict:
    current, proposed = preview.current[kind], preview.proposed[kind]
    figures = {"current": current, "proposed": proposed, "difference": proposed - current}
    shown = {}
    for name, value in figures.items():
        shown[name] = decimal_text(Fraction(value))
        shown[f"{name}Exact"] = fraction_text(Fraction(value))
    return shown


class InterestPreviewView(TXView):
    # It reads and writes nothing (as POST /account-lookups): docs/tenancy-and-keys.md.
    write_scope = scopes.READ

    @document(
        name="InterestPreview",
        resources={V2: InterestPreviewSerializer},
        request={V2: InterestPreviewCreate},
        summary="Preview an account product's interest under proposed terms",
        description="What the product's accounts would have accrued from `from` to `to` under "
        "the proposed terms (the body of POST .../interest-rates, validated alike, without "
        "`effectiveDate`: they are the product's terms from `from`; an account's override "
        "still applies while it lasts), beside what they accrued under the terms in effect "
        "each day, from the balances by value date as they stand now, as the accrual job "
        "computes a day (average daily terms from their period's first day); per kind, never "
        "netted. Writes nothing. Paged by accounts: a page is at most "
        f"{MAX_ACCOUNT_DAYS:,} account-days read (the span's, and under average daily terms "
        f"its period's days before it; {MAX_AVERAGE_ACCOUNT_DAYS:,} when average daily terms "
        "are in play); `nextAfter` names where the next starts "
        '(docs/interest.md, "Previews").',
        operation_id="account_products_interest_previews_create",
        tags=["Products"],
    )
    def post(self, request, productRid):  # noqa: N803
        product = account_product_get(institution=self.institution, product_id=productRid)
        data = self.parse(InterestPreviewCreate)
        today = local_date(product.institution, timezone.now())
        first, last = data.pop("from"), data.pop("to")
        after = data.pop("after", "")
        check_span(first, last, today)
        # The terms' own rules (interest.services), their date put at today: it is no part of
        # a preview.
        values = {field: data.get(field, DEFAULTS.get(field)) for field in FIELDS}
        values["effective_date"] = today
        errors, cleaned = interest_terms_errors(values, today=today)
        if errors:
            raise ValidationFailed(details=errors)
        # Checked as from today, they are the product's terms from the span's first day: the
        # days before it keep the terms in effect then (an average period reads them).
        cleaned["effective_date"] = first
        proposed = InterestTerms(institution=product.institution, product=product, **cleaned)
        preview = interest_preview(
            product=product, proposed=proposed, first=first, last=last, after=after
        )
        return self.respond(
            InterestPreviewSerializer(
                {
                    "productRid": product.pk,
                    "currency": product.currency,
                    "days": preview.days,
                    "accounts": preview.accounts,
                    "deposit": _kind(preview, "deposit"),
                    "overdraft": _kind(preview, "overdraft"),
                    "nextAfter": preview.next_after,
                }
            ).data
        )
