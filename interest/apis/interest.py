"""`/accounts/{accountId}/interest`: an account's interest now (accrued this period, the terms,
the last posting, the period), and `/interest/settlements`: the settlement before a close, v2
only (docs/interest.md, "Posting", "Closing an account")."""

from datetime import timedelta
from decimal import Decimal
from fractions import Fraction

from django.utils import timezone
from rest_framework import serializers

from accounts.selectors import account_get
from api.schema import document
from api.serializers import Serializer, StrictSerializer
from api.versions import V2
from api.views import TXView
from institutions import scopes
from institutions.calendar import local_date

from ..calculation import PLACES, to_places
from ..models import AccrualBook, AccrualKind, InterestPosting, InterestTerms
from ..periods import period_of
from ..posting import interest_settle, interest_start
from ..selectors import interest_terms_list, latest_postings, period_accruals
from ..terms import overrides_by_account, terms_in_effect, terms_on
from .days import fraction_text
from .overrides import InterestOverrideSerializer
from .terms import InterestTermsSerializer

ONE_DAY = timedelta(days=1)
EXACT = f"Minor units, {PLACES} decimal places (half even)."


class PostingOut(Serializer):
    postingId = serializers.CharField(source="id")  # noqa: N815
    kind = serializers.ChoiceField(choices=AccrualKind.choices)
    firstDay = serializers.DateField(source="first_day")  # noqa: N815
    lastDay = serializers.DateField(source="last_day")  # noqa: N815
    trigger = serializers.ChoiceField(
        choices=InterestPosting.Trigger.choices,
        help_text="`period_end`: the posting job; `settlement`: before a close, up to yesterday.",
    )
    accrued = serializers.CharField(help_text=f"The period's accruals, exact. {EXACT}")
    carriedIn = serializers.CharField(  # noqa: N815
        source="carried_in", help_text=f"The residue the last posting carried out. {EXACT}"
    )
    amount = serializers.IntegerField(
        help_text="Posted (minor units): accrued plus carried in, rounded once by the terms."
    )
    carriedOut = serializers.CharField(  # noqa: N815
        source="carried_out", help_text=f"The residue the next posting carries in. {EXACT}"
    )
    withholdingTax = serializers.IntegerField(  # noqa: N815
        source="withholding_tax", help_text="Of a deposit posting, withheld (minor units)."
    )
    journalId = serializers.CharField(source="journal_id", allow_null=True)  # noqa: N815

    def to_representation(self, row):
        return super().to_representation(
            {
                **{name: getattr(row, name) for name in ("id", "kind", "first_day", "last_day")},
                "trigger": row.trigger,
                "accrued": places_text(row.accrued),
                "carried_in": places_text(row.carried_in),
                "amount": row.amount,
                "carried_out": places_text(row.carried_out),
                "withholding_tax": row.withholding_tax,
                "journal_id": row.journal_id,
            }
        )


class AccruedOut(Serializer):
    deposit = serializers.CharField(help_text=EXACT)
    depositExact = serializers.CharField(help_text='"numerator/denominator"')  # noqa: N815
    overdraft = serializers.CharField(help_text=EXACT)
    overdraftExact = serializers.CharField(help_text='"numerator/denominator"')  # noqa: N815


class PeriodOut(Serializer):
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True, help_text="null: at close.")
    frequency = serializers.ChoiceField(choices=InterestTerms.PostingFrequency.choices)


class AccountInterestSerializer(Serializer):
    accountId = serializers.CharField()  # noqa: N815
    currency = serializers.CharField()
    accruedFrom = serializers.DateField(  # noqa: N815
        help_text="The first day not yet posted (the day after the last posting, or the "
        "account's opening day)."
    )
    accruedThrough = serializers.DateField(  # noqa: N815
        allow_null=True, help_text="The last day the accrual job has stored; null: none yet."
    )
    accrued = AccruedOut(
        help_text="Accrued from `accruedFrom` and not yet posted, with the adjustments of "
        "back-valued money found since."
    )
    carried = AccruedOut(help_text="The residue the last postings carried out.")
    terms = InterestTermsSerializer(
        allow_null=True, help_text="The product's terms in effect today; null: none."
    )
    override = InterestOverrideSerializer(
        allow_null=True,
        help_text="The account's own terms in effect today, which replace the product's "
        "(accrued and posted by); null: none.",
    )
    period = PeriodOut(
        allow_null=True,
        help_text="Today's posting period, by the override when one is in effect; null: no terms.",
    )
    lastPostings = PostingOut(  # noqa: N815
        many=True, help_text="The last posted period's rows, one a kind; empty: none yet."
    )


class SettlementCreate(StrictSerializer):
    """No fields: the settlement is of the account in the path, up to yesterday."""


class SettlementSerializer(Serializer):
    accountId = serializers.CharField()  # noqa: N815
    through = serializers.DateField(help_text="The last day accrued and posted: yesterday.")
    postings = PostingOut(many=True, help_text="The rows posted now; empty: nothing to post.")


def places_text(value: Decimal) -> str:
    """A figure kept to PLACES places, as such ("0.000000000000", never "0E-12")."""
    return f"{value:f}"


def _amounts(values: dict) -> dict:
    return {
        **{
            kind: places_text(to_places(values.get(kind, Fraction(0))))
            for kind in AccrualKind.values
        },
        **{
            f"{kind}Exact": fraction_text(values.get(kind, Fraction(0)))
            for kind in AccrualKind.values
        },
    }


class AccountInterestView(TXView):
    @document(
        name="AccountInterest",
        resources={V2: AccountInterestSerializer},
        summary="An account's interest now",
        description="What is accrued and not yet posted (the days the accrual job has stored), "
        "the residue carried, the terms in effect, today's posting period and the last posting "
        '(docs/interest.md, "Posting").',
        operation_id="accounts_interest_retrieve",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803
        institution = self.institution
        account = account_get(institution=institution, account_id=accountId)
        today = local_date(institution, timezone.now())
        latest = latest_postings(account_ids=[account.pk])
        done = max((row.last_day for row in latest.values()), default=None)
        product_terms = list(interest_terms_list(product=account.product))
        overrides = overrides_by_account(account=account).get(account.pk, [])
        opened = local_date(institution, account.created_at)
        first = (
            done + ONE_DAY
            if done is not None
            else interest_start(institution, account, (product_terms, overrides))
        )
        book = AccrualBook.objects.filter(
            institution=institution, currency=account.currency
        ).first()
        through = book.accrued_through if book is not None else None
        # Through today: adjustments are found on the day the accrual job runs, after the
        # last day it accrued.
        sums = (
            period_accruals(firsts={account.pk: first}, last=today)
            if through is not None and today >= first
            else {}
        )
        terms = terms_on(product_terms, today)
        in_effect = terms_in_effect(product_terms, overrides, today)
        override = in_effect if in_effect is not None and in_effect.account_id else None
        period = None
        if in_effect is not None:
            start, end = period_of(in_effect.posting_frequency, today, opened=opened)
            period = {"start": start, "end": end, "frequency": in_effect.posting_frequency}
        return self.respond(
            AccountInterestSerializer(
                {
                    "accountId": account.pk,
                    "currency": account.currency,
                    "accruedFrom": first,
                    "accruedThrough": through,
                    "accrued": _amounts({kind: total for (_, kind), total in sums.items()}),
                    "carried": _amounts(
                        {kind: Fraction(row.carried_out) for (_, kind), row in latest.items()}
                    ),
                    "terms": terms,
                    "override": override,
                    "period": period,
                    "lastPostings": sorted(
                        (row for row in latest.values() if row.last_day == done),
                        key=lambda row: row.kind,
                    ),
                }
            ).data
        )


class InterestSettlementsView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="InterestSettlement",
        resources={V2: SettlementSerializer},
        request={V2: SettlementCreate},
        created=True,
        summary="Settle an account's interest before closing it",
        description="Accrues the account's interest up to and including yesterday (the day it "
        "closes earns nothing) and posts it now: the periods ended by then, and the current "
        "one up to yesterday. Then the balance can be withdrawn and the account closed; "
        "closing with interest accrued and not posted is 422 `interest_not_posted`. Nothing to "
        "post: no postings. A closed account: 422 `account_not_active`. Emits "
        '`interest.posted` for each period posted (docs/interest.md, "Closing an account").',
        operation_id="accounts_interest_settlements_create",
        tags=["Accounts"],
    )
    def post(self, request, accountId):  # noqa: N803
        account = account_get(institution=self.institution, account_id=accountId)
        self.parse(SettlementCreate)
        now = timezone.now()
        postings = interest_settle(account=account, now=now)
        return self.created(
            SettlementSerializer(
                {
                    "accountId": account.pk,
                    "through": local_date(self.institution, now) - ONE_DAY,
                    "postings": postings,
                }
            ).data
        )
