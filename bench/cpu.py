"""CPU seconds of a process tree, read from /proc (Linux): what a benchmark phase cost the app
server and PostgreSQL.

A tree's CPU is its root's own time plus what the root has reaped of its ended children
(`cutime`, `cstime`: PostgreSQL's postmaster reaps every backend that exits, so pgbench's
connections still count after they close) plus the live descendants' own time. Take it before
and after a phase and subtract.
"""

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # ended meanwhile
        return None
    # After "pid (comm) ": comm may hold spaces and parentheses, so split after the last ')'.
    return text[text.rindex(")") + 2 :].split()


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of `root`, its reaped children and its live descendants.

    A child reaped while /proc is walked (a few milliseconds) would be counted nowhere: gone
    from the walk, and not yet in the root's reaped time read before it. Every pgbench
    connection ends as its run does, so a reading taken then lost up to all of their CPU (one
    client: 0.0 s of 2.7; eight: 4.3 of 5.7). The walk is made again until the root's reaped
    time is the same before and after it."""
    while True:
        fields = _stat(root)
        if fields is None:
            return 0.0
        # Fields from 'state' (index 0): utime 11, stime 12, cutime 13, cstime 14.
        ticks = sum(int(value) for value in fields[11:15])
        children = _children()
        pending = list(children.get(root, []))
        while pending:
            pid = pending.pop()
            child = _stat(pid)
            if child is not None:
                ticks += int(child[11]) + int(child[12])
            pending.extend(children.get(pid, []))
        after = _stat(root)
        if after is None or after[13:15] == fields[13:15]:
            return ticks / TICKS


def postmaster_pid(pgdata: Path) -> int | None:
    """The PostgreSQL server's pid from its data directory (None when it is not local)."""
    try:
        return int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
