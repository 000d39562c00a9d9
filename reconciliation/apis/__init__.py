"""The API of reconciliation (docs/reconciliation.md), v2 only: the statements, and matching."""
