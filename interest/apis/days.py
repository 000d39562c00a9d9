"""`/accounts/{accountId}/interest/days`: the daily calculation a customer or an auditor checks,
v2 only (docs/interest.md, "The daily calculation")."""

from datetime import date
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from accounts.selectors import account_get
from api import replicas
from api.schema import document
from api.serializers import Serializer, query_date
from api.versions import V2
from api.views import TXView
from core.exceptions import ValidationFailed
from institutions.calendar import local_date

from ..calculation import PLACES, to_places
from ..rates import rate_text
from ..selectors import MAX_DAYS, end_of_day, interest_days
from .terms import RateField


def decimal_text(value: Fraction) -> str:
    """`value` to PLACES decimal places, half even (the exact fraction is shown beside it), in
    fixed point: `str` of a Decimal would show 0 as "0E-12" and 10^-12 as "1E-12"."""
    return f"{to_places(value):f}"


def fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


class BandOut(Serializer):
    amount = serializers.IntegerField(help_text="The part of the balance at `rate` (minor units).")
    rate = RateField()


class AverageBandOut(Serializer):
    amount = serializers.CharField(
        help_text='The part of the average at `rate`, exact: minor units or "n/d" of them.'
    )
    rate = RateField()


class AverageSideSerializer(Serializer):
    balance = serializers.CharField(
        help_text=f"The period-to-date average (minor units, {PLACES} decimal places, half "
        "even): of the positive balances (deposit) or of what the negative ones owe (overdraft)."
    )
    balanceExact = serializers.CharField(help_text='The same, exact: "n/d".')  # noqa: N815
    rates = AverageBandOut(
        many=True, help_text="The average's parts and their rates; empty when nothing accrues."
    )
    toDate = serializers.CharField(  # noqa: N815
        help_text="The period's interest through the day, as `accrual`."
    )
    accrual = serializers.CharField(help_text="toDate less the day before's.")
    accrualExact = serializers.CharField()  # noqa: N815


class AverageSerializer(Serializer):
    periodStart = serializers.DateField(source="first")  # noqa: N815
    days = serializers.IntegerField(help_text="The period's days averaged so far.")
    deposit = AverageSideSerializer()
    overdraft = AverageSideSerializer()

    def to_representation(self, average):
        def side(one):
            return {
                "balance": decimal_text(one.balance),
                "balanceExact": fraction_text(one.balance),
                "rates": [{"amount": str(b.amount), "rate": rate_text(b.rate)} for b in one.bands],
                "toDate": decimal_text(one.to_date),
                "accrual": decimal_text(one.accrual),
                "accrualExact": fraction_text(one.accrual),
            }

        return {
            "periodStart": average.first.isoformat(),
            "days": average.days,
            "deposit": side(average.deposit),
            "overdraft": side(average.overdraft),
        }


class InterestDaySerializer(Serializer):
    date = serializers.DateField(source="day")
    balance = serializers.IntegerField(
        help_text="The end-of-day posted balance by value date (minor units)."
    )
    kind = serializers.ChoiceField(
        choices=["deposit", "overdraft", "none", "average"],
        help_text="`average`: the day is under average daily balances; its accruals are "
        "`average`'s deposit and overdraft sides.",
    )
    rates = BandOut(
        source="bands",
        many=True,
        help_text="The balance's parts and their rates: one, or a tier's band each (banded "
        "deposit tiers); empty when nothing accrues.",
    )
    fraction = serializers.CharField(
        allow_null=True, help_text='The day\'s share of a year, exact ("1/365"); null: no terms.'
    )
    accrual = serializers.CharField(
        allow_null=True,
        help_text=f"The day's interest in minor units, {PLACES} decimal places (half even); "
        "null on an average day.",
    )
    accrualExact = serializers.CharField(  # noqa: N815
        allow_null=True, help_text='The same, exact: "numerator/denominator" of minor units.'
    )
    termsId = serializers.CharField(source="terms_id", allow_null=True)  # noqa: N815
    average = AverageSerializer(
        allow_null=True,
        help_text="Under average daily balances (`kind` `average`): the period, the averages "
        "and each side's interest; null otherwise.",
    )

    def to_representation(self, day):
        return super().to_representation(
            {
                "day": day.day,
                "balance": day.balance,
                "kind": day.kind,
                "bands": [{"amount": b.amount, "rate": rate_text(b.rate)} for b in day.bands],
                "fraction": None if day.fraction is None else fraction_text(day.fraction),
                "accrual": None if day.average else decimal_text(day.accrual),
                "accrualExact": None if day.average else fraction_text(day.accrual),
                "terms_id": day.terms_id,
                "average": day.average,
            }
        )


class InterestDaysSerializer(Serializer):
    accountId = serializers.CharField()  # noqa: N815
    currency = serializers.CharField()
    days = InterestDaySerializer(many=True)
    depositTotal = serializers.CharField(  # noqa: N815
        help_text="Sum of the deposit days' accruals (minor units, as `accrual`)."
    )
    overdraftTotal = serializers.CharField(  # noqa: N815
        help_text="Sum of the overdraft days' accruals (minor units, as `accrual`)."
    )


DAYS_PARAMETERS = [
    OpenApiParameter("from", str, required=True, description="First day, YYYY-MM-DD."),
    OpenApiParameter(
        "to",
        str,
        required=True,
        description=f"Last day, YYYY-MM-DD (inclusive; {MAX_DAYS} days max; a day that has "
        "ended at the institution).",
    ),
]


def _days_range(request, today: date) -> tuple[date, date]:
    first, last = query_date(request, "from"), query_date(request, "to")
    check_span(first, last, today)
    return first, last


def check_span(first: date, last: date, today: date) -> None:
    """A span of days read from history (these days, a product's preview): 400
    `validation_error` unless `first <= last`, at most MAX_DAYS days, and `last` has ended at
    the institution (before `today` there)."""
    if last < first:
        raise ValidationFailed(details={"to": "Must not be before from."})
    if (last - first).days + 1 > MAX_DAYS:
        raise ValidationFailed(details={"to": f"At most {MAX_DAYS} days."})
    if last >= today:
        raise ValidationFailed(
            details={"to": f"Must be a day that has ended: before {today.isoformat()}."}
        )


class InterestDaysView(TXView):
    @document(
        name="InterestDays",
        resources={V2: InterestDaysSerializer},
        parameters=DAYS_PARAMETERS,
        summary="An account's interest, day by day",
        description="Each day's end-of-day balance by value date, the rates that apply, the "
        "day's fraction of a year and the exact accrual: the calculation a customer or an "
        "auditor checks (docs/interest.md). Computed from the balances as they stand now: "
        "money booked later with an earlier value date changes the days it counts in.",
        operation_id="accounts_interest_days",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803
        institution = self.institution
        first, last = _days_range(request, local_date(institution, timezone.now()))
        # The last day's end may be seconds ago: a replica that has not reached it is not
        # asked, as for a balance at an instant (docs/read-replicas.md).
        replicas.reads_as_of(end_of_day(last, ZoneInfo(institution.time_zone)))
        account = account_get(institution=institution, account_id=accountId)
        days = interest_days(
            account=account, first=first, last=last, time_zone=institution.time_zone
        )
        totals = {kind: Fraction(0) for kind in ("deposit", "overdraft")}
        for day in days:
            for kind, accrual in day.accruals().items():
                totals[kind] += accrual
        return self.respond(
            InterestDaysSerializer(
                {
                    "accountId": account.pk,
                    "currency": account.currency,
                    "days": days,
                    "depositTotal": decimal_text(totals["deposit"]),
                    "overdraftTotal": decimal_text(totals["overdraft"]),
                }
            ).data
        )
