from .alerts import alert_resolve, alerts_raise
from .rules import monitoring_rule_create, monitoring_rule_update
from .screening import Hit, Screening, screen

__all__ = [
    "Hit",
    "Screening",
    "alert_resolve",
    "alerts_raise",
    "monitoring_rule_create",
    "monitoring_rule_update",
    "screen",
]
