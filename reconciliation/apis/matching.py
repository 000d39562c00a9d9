"""Expected payments, rules, runs of matching and the breaks they found over the API
(docs/reconciliation.md), v2 only. Writes need scope `bank`, as the statements they match."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    CurrencyField,
    MetadataField,
    Serializer,
    StrictBooleanField,
    StrictCharField,
    StrictDateField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from core.selectors import get_of_institution
from institutions import scopes

from ..models import (
    BankStatement,
    BankStatementLine,
    ExpectedPayment,
    NetworkSettlement,
    ReconciliationBreak,
    ReconciliationMatch,
    ReconciliationRule,
    ReconciliationRun,
)
from ..services.expected_payments import expected_payment_cancel, expected_payment_create
from ..services.matching import LISTED, reconcile
from ..services.rules import (
    FIELDS,
    MAX_TOLERANCE,
    MAX_WINDOW_DAYS,
    OPERATORS,
    reconciliation_rule_create,
)
from ..services.settlement_matching import reconcile_settlement

TAGS = ["Reconciliation"]
DIRECTION_HELP = "As the statement says it: `credit`, money into the bank account."


# --- expected payments ------------------------------------------------------------------------
class ExpectedPaymentCreate(StrictSerializer):
    currency = CurrencyField()
    direction = serializers.ChoiceField(
        choices=BankStatementLine.Direction.choices, help_text=DIRECTION_HELP
    )
    amount = AmountField(required=False, help_text="Exactly this (minor units); or the bounds.")
    amountMin = AmountField(required=False)  # noqa: N815
    amountMax = AmountField(required=False)  # noqa: N815
    dateFrom = StrictDateField(required=False, help_text="Earliest value date.")  # noqa: N815
    dateTo = StrictDateField(required=False, help_text="Latest value date.")  # noqa: N815
    reference = StrictCharField(
        max_length=140,
        required=False,
        allow_blank=True,
        help_text="Found in the line's remittance, or its bank reference.",
    )
    endToEndId = StrictCharField(max_length=140, required=False, allow_blank=True)  # noqa: N815
    traceNumber = StrictCharField(max_length=40, required=False, allow_blank=True)  # noqa: N815
    metadata = MetadataField(required=False)

    def validate(self, data):
        bounds = "amountMin" in data or "amountMax" in data
        if (
            ("amount" in data) == bounds
            or bounds
            and not ("amountMin" in data and "amountMax" in data)
        ):
            raise serializers.ValidationError({"amount": "An amount, or amountMin and amountMax."})
        if bounds and data["amountMax"] < data["amountMin"]:
            raise serializers.ValidationError({"amountMax": "Below amountMin."})
        if data.get("dateFrom") and data.get("dateTo") and data["dateTo"] < data["dateFrom"]:
            raise serializers.ValidationError({"dateTo": "Before dateFrom."})
        return data


class ExpectedPaymentOut(Serializer):
    expectedPaymentId = serializers.CharField(source="id")  # noqa: N815
    status = serializers.ChoiceField(choices=ExpectedPayment.Status.choices)
    currency = serializers.CharField()
    direction = serializers.ChoiceField(choices=BankStatementLine.Direction.choices)
    amountMin = serializers.IntegerField(source="amount_min")  # noqa: N815
    amountMax = serializers.IntegerField(source="amount_max")  # noqa: N815
    dateFrom = serializers.DateField(source="date_from", allow_null=True)  # noqa: N815
    dateTo = serializers.DateField(source="date_to", allow_null=True)  # noqa: N815
    reference = serializers.CharField()
    endToEndId = serializers.CharField(source="end_to_end_id")  # noqa: N815
    traceNumber = serializers.CharField(source="trace_number")  # noqa: N815
    metadata = MetadataField()
    matchedAt = TimestampField(source="matched_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class ExpectedPaymentQuery(Serializer):
    status = serializers.ChoiceField(choices=ExpectedPayment.Status.choices, required=False)


class CancellationCreate(StrictSerializer):
    """Nothing to send."""


def _expected(institution, expected_id: str) -> ExpectedPayment:
    return get_of_institution(
        ExpectedPayment,
        institution=institution,
        id=expected_id,
        missing="No expected payment with this id.",
    )


class ExpectedPaymentListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="ExpectedPayment",
        resources={V2: ExpectedPaymentOut},
        many=True,
        summary="List expected payments, newest first",
        operation_id="expected_payments_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(ExpectedPaymentQuery)
        rows = ExpectedPayment.objects.filter(institution=self.institution)
        if query.get("status"):
            rows = rows.filter(status=query["status"])
        return self.respond_list(rows, ExpectedPaymentOut)

    @document(
        name="ExpectedPayment",
        resources={V2: ExpectedPaymentOut},
        request={V2: ExpectedPaymentCreate},
        created=True,
        summary="Announce money not yet seen on a statement",
        description="`amount`, or `amountMin` and `amountMax` (minor units). `unmatched` until a "
        "reconciliation matches it to a statement line.",
        operation_id="expected_payments_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(ExpectedPaymentCreate)
        expected = expected_payment_create(
            institution=self.institution,
            currency=data["currency"],
            direction=data["direction"],
            amount=data.get("amount"),
            amount_min=data.get("amountMin"),
            amount_max=data.get("amountMax"),
            date_from=data.get("dateFrom"),
            date_to=data.get("dateTo"),
            reference=data.get("reference", ""),
            end_to_end_id=data.get("endToEndId", ""),
            trace_number=data.get("traceNumber", ""),
            metadata=data.get("metadata"),
            actor=Actor.of_request(request),
        )
        return self.created(ExpectedPaymentOut(expected).data)


class ExpectedPaymentDetailView(TXView):
    @document(
        name="ExpectedPayment",
        resources={V2: ExpectedPaymentOut},
        summary="Retrieve an expected payment",
        operation_id="expected_payments_retrieve",
        tags=TAGS,
    )
    def get(self, request, expectedPaymentId):  # noqa: N803
        return self.respond(ExpectedPaymentOut(_expected(self.institution, expectedPaymentId)).data)


class ExpectedPaymentCancellationsView(TXView):
    write_scope = scopes.BANK

    @document(
        name="ExpectedPayment",
        resources={V2: ExpectedPaymentOut},
        request={V2: CancellationCreate},
        created=True,
        summary="Cancel an expected payment",
        description="409 `invalid_state_transition` once matched or cancelled.",
        operation_id="expected_payment_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, expectedPaymentId):  # noqa: N803
        expected = _expected(self.institution, expectedPaymentId)
        self.parse(CancellationCreate)
        expected = expected_payment_cancel(expected=expected, actor=Actor.of_request(request)).value
        return self.created(ExpectedPaymentOut(expected).data)


# --- rules ------------------------------------------------------------------------------------
class ConditionIn(StrictSerializer):
    field = serializers.ChoiceField(choices=FIELDS)
    operator = serializers.ChoiceField(choices=OPERATORS)


class RuleCreate(StrictSerializer):
    name = StrictCharField(max_length=100)
    conditions = ConditionIn(many=True, help_text="Every one must hold.")
    cardinality = serializers.ChoiceField(choices=ReconciliationRule.Cardinality.choices)
    amountTolerance = WholeNumberField(  # noqa: N815
        required=False, min_value=0, max_value=MAX_TOLERANCE, help_text="Minor units."
    )
    dateWindowDays = WholeNumberField(  # noqa: N815
        required=False, min_value=0, max_value=MAX_WINDOW_DAYS
    )


class ConditionOut(Serializer):
    field = serializers.CharField()
    operator = serializers.CharField()


class RuleOut(Serializer):
    ruleId = serializers.CharField(source="id")  # noqa: N815
    name = serializers.CharField()
    position = serializers.IntegerField(help_text="Tried in this order, after the exact keys.")
    conditions = ConditionOut(many=True)
    cardinality = serializers.ChoiceField(choices=ReconciliationRule.Cardinality.choices)
    amountTolerance = serializers.IntegerField(source="amount_tolerance")  # noqa: N815
    dateWindowDays = serializers.IntegerField(source="date_window_days")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class RuleListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="ReconciliationRule",
        resources={V2: RuleOut},
        many=True,
        summary="List the reconciliation rules, in their order",
        operation_id="reconciliation_rules_list",
        tags=TAGS,
    )
    def get(self, request):
        rows = ReconciliationRule.objects.filter(institution=self.institution)
        return self.respond_list(rows, RuleOut, order_key="position")

    @document(
        name="ReconciliationRule",
        resources={V2: RuleOut},
        request={V2: RuleCreate},
        created=True,
        summary="Add a reconciliation rule (it goes last)",
        description="400 when an amount is compared otherwise than `equals`, a field is named "
        "twice, or a one_to_many or many_to_one rule has no condition but the amount.",
        operation_id="reconciliation_rules_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(RuleCreate)
        rule = reconciliation_rule_create(
            institution=self.institution,
            name=data["name"],
            conditions=data["conditions"],
            cardinality=data["cardinality"],
            amount_tolerance=data.get("amountTolerance", 0),
            date_window_days=data.get("dateWindowDays", 0),
            actor=Actor.of_request(request),
        )
        return self.created(RuleOut(rule).data)


# --- runs -------------------------------------------------------------------------------------
class ReconciliationCreate(StrictSerializer):
    statementId = StrictCharField(max_length=40, required=False)  # noqa: N815
    settlementId = StrictCharField(  # noqa: N815
        max_length=40, required=False, help_text="A network settlement: or a statementId."
    )
    dryRun = StrictBooleanField(required=False, help_text="Answer, write nothing.")  # noqa: N815

    def validate(self, data):
        if ("statementId" in data) == ("settlementId" in data):
            raise serializers.ValidationError(
                {"statementId": "Exactly one of statementId and settlementId."}
            )
        return data


class LedgerLineOut(Serializer):
    entryId = serializers.IntegerField(help_text="The ledger entry of the mirrored account.")  # noqa: N815
    journalId = serializers.CharField()  # noqa: N815


class MatchOut(Serializer):
    how = serializers.ChoiceField(choices=["key", "rule", "expected"])
    key = serializers.CharField(help_text="end_to_end_id, trace_number or bank_reference.")
    ruleId = serializers.CharField(allow_null=True)  # noqa: N815
    expectedPaymentId = serializers.CharField(allow_null=True)  # noqa: N815
    statementLineIds = serializers.ListField(child=serializers.CharField())  # noqa: N815
    settlementRowIds = serializers.ListField(child=serializers.CharField())  # noqa: N815
    ledgerLines = LedgerLineOut(many=True)  # noqa: N815
    difference = serializers.IntegerField(
        help_text="The statement's amount less the ledger's, signed as the statement signs; "
        "a settlement's: the network's less card clearing's, signed as the settlement signs."
    )


class RunBreakOut(Serializer):
    breakId = serializers.CharField(allow_null=True, help_text="null on a dry run.")  # noqa: N815
    kind = serializers.ChoiceField(choices=ReconciliationBreak.Kind.choices)
    amount = serializers.IntegerField()
    statementLineId = serializers.CharField(allow_null=True)  # noqa: N815
    settlementRowId = serializers.CharField(allow_null=True)  # noqa: N815
    ledgerLines = LedgerLineOut(many=True)  # noqa: N815
    expectedPaymentId = serializers.CharField(allow_null=True)  # noqa: N815


class RunCountsOut(Serializer):
    matches = serializers.IntegerField()
    breaks = serializers.IntegerField()
    breaksResolved = serializers.IntegerField()  # noqa: N815


class ReconciliationOut(Serializer):
    reconciliationId = serializers.CharField(  # noqa: N815
        allow_null=True, help_text="null on a dry run, or when there was nothing new."
    )
    statementId = serializers.CharField(allow_null=True)  # noqa: N815
    settlementId = serializers.CharField(allow_null=True)  # noqa: N815
    dryRun = serializers.BooleanField()  # noqa: N815
    matches = MatchOut(
        many=True,
        help_text="The first 1,000 in the run's order; every one: `counts.matches`, and "
        "`GET /reconciliations/{reconciliationId}/matches`.",
    )
    breaks = RunBreakOut(
        many=True,
        help_text="The first 1,000 opened; every one: `counts.breaks`, and "
        "`GET /reconciliation-breaks?reconciliationId=...`.",
    )
    breaksResolved = serializers.ListField(  # noqa: N815
        child=serializers.CharField(),
        help_text="Breaks this run resolves: their lines are matched now (a dry run: would). "
        "The first 1,000.",
    )
    counts = RunCountsOut(help_text="How many in all: the lists above stop at 1,000.")


def _ledger(items) -> list[dict]:
    return [{"entryId": item.entry_id, "journalId": item.journal_id} for item in items]


def _result(result) -> dict:
    plan = result.plan
    rows = result.break_rows or [None] * len(plan.breaks)
    return {
        "reconciliationId": result.run.pk if result.run else None,
        "statementId": plan.statement.pk,
        "settlementId": None,
        "dryRun": result.dry_run,
        "matches": [
            {
                "how": match.how,
                "key": match.key,
                "ruleId": match.rule_id,
                "expectedPaymentId": match.expected_id,
                "statementLineIds": match.line_ids,
                "settlementRowIds": [],
                "ledgerLines": _ledger(match.ledger),
                "difference": match.difference,
            }
            for match in plan.matches
        ],
        "breaks": [
            {
                "breakId": row.pk if row else None,
                "kind": item.kind,
                "amount": item.amount,
                "statementLineId": item.line_id,
                "settlementRowId": None,
                "ledgerLines": _ledger(item.ledger),
                "expectedPaymentId": item.expected_id,
            }
            for item, row in zip(plan.breaks, rows, strict=True)
        ],
        "breaksResolved": [row.pk for row in plan.resolved],
        "counts": {
            "matches": plan.matched_count,
            "breaks": plan.breaks_count,
            "breaksResolved": plan.resolved_count,
        },
    }


def _settlement_result(result) -> dict:
    """A settlement's run in the same shape: a match is one row and one entry of card
    clearing, by the network transaction id. Its lists stop at `LISTED` as a statement's (a
    settlement's run holds its at most 10,000 rows in memory: not the statements' scale)."""
    plan = result.plan
    rows = result.break_rows or [None] * len(plan.breaks)
    return {
        "reconciliationId": result.run.pk if result.run else None,
        "statementId": None,
        "settlementId": plan.settlement.pk,
        "dryRun": result.dry_run,
        "matches": [
            {
                "how": match.how,
                "key": match.key,
                "ruleId": None,
                "expectedPaymentId": None,
                "statementLineIds": [],
                "settlementRowIds": [match.row.pk],
                "ledgerLines": _ledger([match.cleared]),
                "difference": match.difference,
            }
            for match in plan.matches[:LISTED]
        ],
        "breaks": [
            {
                "breakId": row.pk if row else None,
                "kind": item.kind,
                "amount": item.amount,
                "statementLineId": None,
                "settlementRowId": item.row.pk if item.row else None,
                "ledgerLines": _ledger(
                    [item.match.cleared] if item.match else [item.cleared] if item.cleared else []
                ),
                "expectedPaymentId": None,
            }
            for item, row in list(zip(plan.breaks, rows, strict=True))[:LISTED]
        ],
        "breaksResolved": [row.pk for row in plan.resolved[:LISTED]],
        "counts": {
            "matches": len(plan.matches),
            "breaks": len(plan.breaks),
            "breaksResolved": len(plan.resolved),
        },
    }


class ReconciliationListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="Reconciliation",
        resources={V2: ReconciliationOut},
        request={V2: ReconciliationCreate},
        created=True,
        summary="Match a statement against the ledger, or a network settlement against card "
        "clearing",
        description="Exactly one of `statementId` and `settlementId`. A statement: exact keys "
        "first (end-to-end id, trace number, bank reference), then the institution's rules in "
        "order, then expected payments. A settlement: each row with the transaction TX cleared "
        "under its network transaction id. Answers what matched and what broke in this run. A "
        "line or row is matched once: a run matches only what is unmatched, and one that finds "
        "nothing new writes nothing. `dryRun`: the same answer, nothing written.",
        operation_id="reconciliations_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(ReconciliationCreate)
        if "settlementId" in data:
            settlement = get_of_institution(
                NetworkSettlement.objects.select_related("institution"),
                institution=self.institution,
                id=data["settlementId"],
                missing="No network settlement with this id.",
            )
            result = reconcile_settlement(settlement=settlement, dry_run=data.get("dryRun", False))
            return self.created(ReconciliationOut(_settlement_result(result)).data)
        statement = get_of_institution(
            BankStatement.objects.defer("content").select_related("institution"),
            institution=self.institution,
            id=data["statementId"],
            missing="No bank statement with this id.",
        )
        result = reconcile(statement=statement, dry_run=data.get("dryRun", False))
        return self.created(ReconciliationOut(_result(result)).data)


class RunMatchOut(Serializer):
    """A stored match in `MatchOut`'s shape."""

    def to_representation(self, match) -> dict:
        return {
            "how": match.how,
            "key": match.key,
            "ruleId": match.rule_id,
            "expectedPaymentId": match.expected_payment_id,
            "statementLineIds": [item.statement_line_id for item in match.statement_lines.all()],
            "settlementRowIds": [item.settlement_row_id for item in match.settlement_rows.all()],
            "ledgerLines": [
                {"entryId": item.entry_id, "journalId": item.entry.journal_id}
                for item in match.ledger_lines.all()
            ],
            "difference": match.difference,
        }


class RunMatchListView(TXView):
    @document(
        name="ReconciliationMatch",
        resources={V2: MatchOut},
        many=True,
        summary="List a reconciliation's matches, newest first",
        description="Every match the run wrote (its answer lists the first 1,000). A match's "
        "lines and ledger lines as in the run's answer. Another institution's run answers 404.",
        operation_id="reconciliation_matches_list",
        tags=TAGS,
    )
    def get(self, request, reconciliationId):  # noqa: N803
        run = get_of_institution(
            ReconciliationRun,
            institution=self.institution,
            id=reconciliationId,
            missing="No reconciliation with this id.",
        )
        rows = ReconciliationMatch.objects.filter(run=run).prefetch_related(
            "statement_lines", "settlement_rows", "ledger_lines__entry"
        )
        return self.respond_list(rows, RunMatchOut)


# --- breaks -----------------------------------------------------------------------------------
class BreakOut(Serializer):
    breakId = serializers.CharField(source="id")  # noqa: N815
    kind = serializers.ChoiceField(choices=ReconciliationBreak.Kind.choices)
    state = serializers.ChoiceField(choices=ReconciliationBreak.State.choices)
    amount = serializers.IntegerField(
        help_text="What the statement says less what the ledger says, for the lines it "
        "concerns, signed as the statement signs (money in positive), minor units: the "
        "closing balance less the open breaks is the ledger's account of the bank's money. A "
        "settlement's: what the network settled less what TX cleared, signed as the settlement "
        "signs (what the network pays the institution positive)."
    )
    currency = serializers.CharField()
    statementId = serializers.CharField(source="statement_id", allow_null=True)  # noqa: N815
    statementLineId = serializers.CharField(source="statement_line_id", allow_null=True)  # noqa: N815
    settlementId = serializers.CharField(source="settlement_id", allow_null=True)  # noqa: N815
    settlementRowId = serializers.CharField(source="settlement_row_id", allow_null=True)  # noqa: N815
    ledgerLines = serializers.SerializerMethodField()  # noqa: N815
    expectedPaymentId = serializers.CharField(source="expected_payment_id", allow_null=True)  # noqa: N815
    reconciliationId = serializers.CharField(source="run_id")  # noqa: N815
    resolution = serializers.CharField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    resolvedAt = TimestampField(source="resolved_at", allow_null=True)  # noqa: N815
    resolvedOn = serializers.DateField(  # noqa: N815
        source="resolved_on",
        allow_null=True,
        help_text="The value date from which the difference no longer stands: the later side's "
        "of the match that resolved it, or the value date of the money booked.",
    )

    @extend_schema_field(LedgerLineOut(many=True))
    def get_ledgerLines(self, row) -> list[dict]:  # noqa: N802
        if row.entry_id is not None and row.match_id is None:
            return [{"entryId": row.entry_id, "journalId": row.entry.journal_id}]
        if row.match_id is None:
            return []
        return [
            {"entryId": item.entry_id, "journalId": item.entry.journal_id}
            for item in row.match.ledger_lines.all()
        ]


class BreakQuery(Serializer):
    state = serializers.ChoiceField(choices=ReconciliationBreak.State.choices, required=False)
    kind = serializers.ChoiceField(choices=ReconciliationBreak.Kind.choices, required=False)
    statementId = StrictCharField(required=False, max_length=40)  # noqa: N815
    settlementId = StrictCharField(required=False, max_length=40)  # noqa: N815
    reconciliationId = StrictCharField(  # noqa: N815
        required=False, max_length=40, help_text="The run that opened them."
    )


def _breaks():
    return ReconciliationBreak.objects.select_related("entry", "match").prefetch_related(
        "match__ledger_lines__entry"
    )


class BreakListView(TXView):
    @document(
        name="ReconciliationBreak",
        resources={V2: BreakOut},
        many=True,
        summary="List the reconciliation breaks, newest first",
        operation_id="reconciliation_breaks_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(BreakQuery)
        rows = _breaks().filter(institution=self.institution)
        for name, column in (
            ("state", "state"),
            ("kind", "kind"),
            ("statementId", "statement_id"),
            ("settlementId", "settlement_id"),
            ("reconciliationId", "run_id"),
        ):
            if query.get(name):
                rows = rows.filter(**{column: query[name]})
        return self.respond_list(rows, BreakOut)


class BreakDetailView(TXView):
    @document(
        name="ReconciliationBreak",
        resources={V2: BreakOut},
        summary="Retrieve a reconciliation break",
        operation_id="reconciliation_breaks_retrieve",
        tags=TAGS,
    )
    def get(self, request, breakId):  # noqa: N803
        row = get_of_institution(
            _breaks(), institution=self.institution, id=breakId, missing="No break with this id."
        )
        return self.respond(BreakOut(row).data)
