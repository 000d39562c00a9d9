"""Structured logs: one JSON object per line.

Only fields we put there are written: the access line (`tx.access`) carries `tranId`,
institution, method, path (never the query string), status and duration. Request bodies and
headers are never logged, so no PAN, CVV, PIN, national id or API key reaches a log. Every
record created while a request is served carries its `tranId` (`install_tran_id_on_records`).
"""

import json
import logging
from datetime import UTC, datetime

from api.context import current_tran_id

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def install_tran_id_on_records() -> None:
    """Make every log record created while a request is served carry its `tranId`, whatever
    logger or handler writes it (Django's own, a library's, ours). Called once at start-up."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "tx_tran_id", False):
        return

    def factory(*args, **kwargs):
        record = previous(*args, **kwargs)
        tran_id = current_tran_id.get()
        if tran_id is not None:
            record.tranId = tran_id
        return record

    factory.tx_tran_id = True
    logging.setLogRecordFactory(factory)


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
