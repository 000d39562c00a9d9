"""The base of the commands that name an institution or an API key: `TXCommand` (`core`) with
the lookups by id, name or public prefix."""

from core.management.base import TXCommand
from institutions.services import api_key_get, institution_get


class InstitutionCommand(TXCommand):
    @staticmethod
    def institution(reference: str):
        return institution_get(reference=reference)

    @staticmethod
    def api_key(reference: str):
        return api_key_get(reference=reference)
