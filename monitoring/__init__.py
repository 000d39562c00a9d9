"""Monitoring: an institution's transaction monitoring rules, and the alerts their hits raise.

Card authorizations and card transfers call `monitoring.services.screen` before they approve a
payment and `alerts_raise` with its result; staff resolve alerts in the admin. See
`docs/monitoring.md`.
"""
