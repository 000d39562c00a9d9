"""`/monitoring-rules`: create, list, read and change an institution's monitoring rules.
Identical in both versions (v1: its envelope, 200 on creation, POST as an alias of PATCH)."""

from api.schema import both, document
from api.views import TXView
from institutions import scopes

from ..selectors import monitoring_rule_get, monitoring_rule_list
from ..services import monitoring_rule_create, monitoring_rule_update
from .serializers import MonitoringRuleCreate, MonitoringRuleOut, MonitoringRuleUpdate

KIND_HELP = (
    "Parameters per `kind` (any other parameter is 400 `validation_error` naming it): "
    "`amount_threshold`: `amount`, `currency`, optional `riskLevel` (a payment in `currency` "
    "above `amount` by a card of that risk level, or any card, hits); `velocity_count`: "
    "`windowSeconds`, `maxCount` (more than `maxCount` payments of the card in the window, "
    "this one included, hit); `velocity_amount`: `windowSeconds`, `maxAmount`, `currency` (the "
    "card's payments in `currency` in the window plus this one above `maxAmount` hit); "
    "`blocked_mcc`: `mccs`; `blocked_country`: `countries` (authorizations at such a merchant "
    "hit; card transfers never)."
)


class MonitoringRuleListView(TXView):
    write_scope = scopes.MONITORING_WRITE

    @document(
        name="MonitoringRule",
        resources=both(MonitoringRuleOut),
        request=both(MonitoringRuleCreate),
        created=True,
        summary="Create a monitoring rule",
        description=KIND_HELP + " `action`: `alert` or `decline`. `enabled` defaults to true.",
        operation_id="monitoring_rules_create",
        tags=["Monitoring"],
    )
    def post(self, request):
        data = dict(self.parse(MonitoringRuleCreate))
        rule = monitoring_rule_create(
            institution=self.institution,
            name=data.pop("name"),
            kind=data.pop("kind"),
            action=data.pop("action"),
            enabled=data.pop("enabled", True),
            **data,
        )
        return self.created(MonitoringRuleOut(rule).data)

    @document(
        name="MonitoringRule",
        resources=both(MonitoringRuleOut),
        many=True,
        summary="List monitoring rules, newest first",
        operation_id="monitoring_rules_list",
        tags=["Monitoring"],
    )
    def get(self, request):
        return self.respond_list(
            monitoring_rule_list(institution=self.institution), MonitoringRuleOut
        )


class MonitoringRuleDetailView(TXView):
    write_scope = scopes.MONITORING_WRITE

    @document(
        name="MonitoringRule",
        resources=both(MonitoringRuleOut),
        summary="Retrieve a monitoring rule",
        operation_id="monitoring_rules_retrieve",
        tags=["Monitoring"],
    )
    def get(self, request, ruleId):  # noqa: N803 (path parameters are camelCase)
        rule = monitoring_rule_get(institution=self.institution, rule_id=ruleId)
        return self.respond(MonitoringRuleOut(rule).data)

    @document(
        name="MonitoringRule",
        resources=both(MonitoringRuleOut),
        request=both(MonitoringRuleUpdate),
        summary="Change a monitoring rule",
        description="Send only what changes: `name`, `action`, `enabled` and the parameters of "
        "the rule's kind (`riskLevel: null` applies an amount threshold to any card). A rule "
        "never changes kind (400). " + KIND_HELP,
        operation_id="monitoring_rules_update",
        tags=["Monitoring"],
    )
    def patch(self, request, ruleId):  # noqa: N803
        rule = monitoring_rule_get(institution=self.institution, rule_id=ruleId)
        changes = self.parse(MonitoringRuleUpdate)
        rule = monitoring_rule_update(rule=rule, changes=dict(changes)).value
        return self.respond(MonitoringRuleOut(rule).data)
