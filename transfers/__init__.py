"""Transfers: money movement between accounts, cards and PANs.

The domain: `services/` (one module per kind of transfer on one shared core: single, two-phase,
reversals, metadata), `batches.py` (many transfers in one operation), `endpoints.py` (the two
ends of a transfer), `locks.py` (every row lock of transfers, in one order), `selectors.py`. The
wire: `apis.py`, `urls.py`, `admin.py`.
"""
