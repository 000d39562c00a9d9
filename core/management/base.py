"""Shared pieces of the operators' commands: institution and key lookups, service errors."""

from django.core.management.base import BaseCommand, CommandError

from core.exceptions import TXError
from institutions.services import api_key_get, institution_get


class TXCommand(BaseCommand):
    """A thin command: parse arguments, call a service, turn its errors into CommandError."""

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except TXError as error:
            raise CommandError(error.message) from None

    @staticmethod
    def institution(reference: str):
        return institution_get(reference=reference)

    @staticmethod
    def api_key(reference: str):
        return api_key_get(reference=reference)
