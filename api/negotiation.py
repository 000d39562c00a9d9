"""JSON only: responses are always rendered as JSON, whatever `Accept` says.

DRF would answer 406 for `Accept: text/html`; an API client gets JSON instead, always.
"""

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer


class JSONOnlyNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        for renderer in renderers:
            if isinstance(renderer, JSONRenderer):
                return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)
