"""The worker's connection to its database, kept across a restart or a failover of the server
(docs/jobs.md, "When the database goes away").

`manage.py procrastinate worker` runs on a `PsycopgConnector` of its own (a psycopg pool plus
one connection that LISTENs for new jobs). In procrastinate 3.10 that listening connection does
not survive the server: when it dies, the listener reconnects at once, fails while the server
is still down, and the worker stops itself ("Side task listener failed ... stopping worker"),
exiting 0, so a supervisor that restarts only failures left the queue unserved. Here the
listener tries again every LISTEN_RETRY_SECONDS until the server is back; the worker meanwhile
still polls for jobs (`fetch_job_polling_interval`), through its pool, which replaces dead
connections (its `check`) and reconnects every 0.1 s (core.postgresql.base).
"""

import asyncio
import logging

from procrastinate import exceptions, psycopg_connector
from procrastinate.contrib.django import utils

logger = logging.getLogger("tx.jobs")

LISTEN_RETRY_SECONDS = 0.5


class RecoveringConnector(psycopg_connector.PsycopgConnector):
    async def listen_notify(self, on_notification, channels) -> None:
        while True:
            try:
                await super().listen_notify(on_notification=on_notification, channels=channels)
            except exceptions.ConnectorException as error:
                logger.warning(
                    "job notifications interrupted: listening again",
                    extra={"action": "listen_again", "error": str(error.__cause__ or error)},
                )
                await asyncio.sleep(LISTEN_RETRY_SECONDS)


def on_app_ready(app) -> None:
    """PROCRASTINATE_ON_APP_READY: the worker command asks the app's Django connector for the
    connector it runs on (`get_worker_connector`); it gets a `RecoveringConnector` on the same
    database, built as procrastinate builds its own."""
    alias = app.connector.alias
    app.connector.get_worker_connector = lambda: RecoveringConnector(
        kwargs=utils.connector_params(alias)
    )
