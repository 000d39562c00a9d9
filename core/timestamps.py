"""The one format of an instant that the API shows and the domain's messages quote: ISO 8601 in
UTC with milliseconds and `Z` (`2026-11-26T05:25:00.123Z`). The API's `meta.timestamp` and
timestamp fields use it (`api.context`, `api.serializers.TimestampField`); so do the services
that name an instant in an error message ("This hold expired at ...")."""

from datetime import UTC, datetime


def iso_millis(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z`: the one time format of the API."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )
