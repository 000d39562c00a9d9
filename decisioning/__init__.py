"""Decisioning: the program's own endpoint that decides card authorizations in real time
(issue 31; docs/decisioning.md). Below `authorizations`, which will call it."""
