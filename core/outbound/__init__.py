"""Outbound HTTP to a client's own servers: where TX may connect (`core.outbound.targets`: the
URL rules and the address rules, no server-side request forgery into the bank's network) and
how (`core.outbound.transport`: one guarded POST with one wall-clock deadline and a cap on the
bytes read).

They live in `core` because more than one app calls out: webhook deliveries (`webhooks`) and
the program's decisioning endpoints (`decisioning`, below `authorizations`, which will call
them during an authorization: issue 31). Neither knows any app: the rules are read from the
settings named `WEBHOOK_*` (docs/configuration.md), which now govern every outbound call; the
names are kept so that existing deployments keep their configuration.
"""
