"""Structured logs: one JSON object per line.

Only fields we put there are written: the access line (`tx.access`) carries `tranId`,
institution, method, path (never the query string), status and duration. Request bodies and
headers are never logged, so no PAN, CVV, PIN, national id or API key reaches a log. Every
line written while a request is served carries its `tranId` (`RequestIdFilter`).
"""

import json
import logging
from datetime import UTC, datetime

from .context import current_tran_id

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class RequestIdFilter(logging.Filter):
    """Adds the current request's `tranId` to every record written while serving it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "tranId"):
            tran_id = current_tran_id.get()
            if tran_id is not None:
                record.tranId = tran_id
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
