"""The back office's pages, one module per domain (docs/back-office.md, "Where it lives").

Django's admin imports this package when it starts (`autodiscover`); each module registers its
models' admins on the site (`backoffice.sites.StaffAdminSite`) as it is imported.
"""

from . import (  # noqa: F401 (each registers its admins)
    accounts,
    api,
    approvals,
    audit,
    authorizations,
    cards,
    customers,
    decisioning,
    disputes,
    events,
    institutions,
    interest,
    monitoring,
    network_settlements,
    payments,
    reconciliation,
    sepa,
    staff,
    statement_lines,
    transfers,
    webhooks,
)
