"""TX's own messages kept as outbound rail files: `written`, for the payments job to deliver into
the rail's outbox (`connector.deliver`), or delivered already (an instant payment's, handed to
the clearing at once)."""

import hashlib

from ..models import RailFile


def outbound_kept(
    rail_file: RailFile, *, rail: str, name: str, content: bytes, entry_count: int, **fields
) -> RailFile:
    """`rail_file` (made first where its id names the message in it: `RailFile(institution=)`)
    saved as an outbound file of `rail` whose bytes are `content`, `written` unless `fields`
    say otherwise (`status`, `delivered_at`, a total...)."""
    rail_file.rail = rail
    rail_file.direction = RailFile.Direction.OUTBOUND
    rail_file.status = RailFile.Status.WRITTEN
    rail_file.name = name
    rail_file.sha256 = hashlib.sha256(content).hexdigest()
    rail_file.content = content
    rail_file.entry_count = entry_count
    for field, value in fields.items():
        setattr(rail_file, field, value)
    rail_file.save(force_insert=True)
    return rail_file
