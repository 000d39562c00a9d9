"""A progress bar for long operators' commands (docs/design.md section 11), without dependencies.

It writes to the command's stderr, so stdout keeps only the result (and `--json` stays one
line). On a terminal it redraws one line, `\\r[#####.....] 40/100`, at most ten times a second
and at the end; anywhere else (a pipe, a log file) it writes only the final line.

    bar = ProgressBar(self.stderr)
    report = some_service(on_progress=bar.update)  # update(done, total)
    bar.finish()
"""

import time

from django.core.management.base import OutputWrapper


class ProgressBar:
    def __init__(self, stream, total: int | None = None, *, width: int = 30, interval=0.1):
        self.stream = stream
        self.total = total
        self.done = 0
        self.width = width
        self.interval = interval
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._drawn_at: float | None = None
        self._finished = False

    def update(self, done: int, total: int | None = None) -> None:
        """`done` items of `total` (the total given here, or at construction)."""
        self.done = done
        if total is not None:
            self.total = total
        if not self.tty:
            return
        now = time.monotonic()
        if self._drawn_at is None or now - self._drawn_at >= self.interval or self._complete():
            self._draw("\r" + self.line())
            self._drawn_at = now

    def finish(self) -> None:
        """Draw the final state once and end the line."""
        if self._finished:
            return
        self._finished = True
        self._draw(("\r" if self.tty else "") + self.line() + "\n")

    def line(self) -> str:
        total = self.total or 0
        filled = self.width if total <= 0 else min(self.width, self.width * self.done // total)
        return f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{total}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finish()

    def _complete(self) -> bool:
        return self.total is not None and self.done >= self.total

    def _draw(self, text: str) -> None:
        if isinstance(self.stream, OutputWrapper):
            # No added newline, and not in the stderr's error colour.
            self.stream.write(text, style_func=str, ending="")
        else:
            self.stream.write(text)
        self.stream.flush()
