"""Transfers: money movement between accounts, cards and PANs.

The app is registered so that the layout of DESIGN.md section 2 is in place; its models, services
and endpoints arrive with their own issue. Until then it exposes nothing.
"""
