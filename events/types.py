"""Every type of event there is, and the kind of object each is about (the event's
`objectType`, which clients see: `events.services.emit_for` takes it from here). A new one is
added here (and documented in docs/events.md)."""

OBJECT_TYPES = {
    "customer.created": "customer",
    "customer.updated": "customer",
    "account.opened": "account",
    "account.status_changed": "account",
    "account.overdraft_limit_changed": "account",
    "account.updated": "account",
    "adjustment.posted": "adjustment",
    "hold.created": "hold",
    "hold.captured": "hold",
    "hold.released": "hold",
    "hold.expired": "hold",
    "hold.updated": "hold",
    "transfer.posted": "transfer",
    "transfer.reversed": "transfer",
    "transfer.updated": "transfer",
    "transfer.pending": "transfer",
    "transfer.voided": "transfer",
    "transfer.expired": "transfer",
    "card.issued": "card",
    "card.updated": "card",
    "card.status_changed": "card",
    "card.renewed": "card",
    "card.reissued": "card",
    "card.replaced": "card",
    "card.pin_changed": "card",
    "card.pin_blocked": "card",
    "card.limits_changed": "card",
    "card.security_settings_changed": "card",
    "authorization.approved": "authorization",
    "authorization.declined": "authorization",
    "authorization.reversed": "authorization",
    "authorization.expired": "authorization",
    "transaction.settled": "transaction",
    "monitoring.rule_created": "monitoring_rule",
    "monitoring.rule_updated": "monitoring_rule",
    "monitoring.alert_raised": "monitoring_alert",
    "monitoring.alert_resolved": "monitoring_alert",
    "security.pan_guessing_suspected": "api_key",
    # An account or a card product (`data.productType`: account | card).
    "product.created": "product",
    "product.updated": "product",
}

EVENT_TYPES = tuple(OBJECT_TYPES)
