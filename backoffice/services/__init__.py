"""The back office's writes: `approvals` (four eyes where money moves: docs/back-office.md)."""
