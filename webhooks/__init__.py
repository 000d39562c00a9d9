"""Webhooks: an institution's endpoints, and the delivery of its events to them.

`events.services.emit` calls `webhooks.services.deliveries_schedule` in the transaction of the
change: one delivery per enabled endpoint subscribed to the event's type, and one procrastinate
job per delivery (`webhooks.tasks.deliver`), committed or rolled back with the change. The job
POSTs the event signed per Standard Webhooks and retries with backoff for up to three days. See
`docs/webhooks.md`.
"""
