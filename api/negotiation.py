"""Content negotiation.

- JSON only for the API's responses (`JSONOnlyNegotiation`): they are always rendered as JSON,
  whatever `Accept` says. DRF would answer 406 for `Accept: text/html`; an API client gets JSON
  instead, always (errors too).
- A view that also answers another media type (a statement as CSV or PDF) asks `wanted` which
  one the client prefers, and builds that response itself.
"""

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer

JSON = "application/json"


class JSONOnlyNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        for renderer in renderers:
            if isinstance(renderer, JSONRenderer):
                return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


def wanted(request, offered: tuple[str, ...]) -> str:
    """The media type of `offered` (JSON first) the `Accept` header prefers: the highest `q`,
    then the order given; JSON for `*/*`, no header or nothing offered."""
    best, best_q = JSON, -1.0
    for part in request.META.get("HTTP_ACCEPT", "").split(","):
        media, *params = (piece.strip() for piece in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        media = media.lower()
        if media in offered and q > 0 and q > best_q:
            best, best_q = media, q
        elif media in ("*/*", "application/*") and q > 0 and q > best_q:
            best, best_q = JSON, q
    return best
