"""Shared pieces of the operators' commands: each runs its services as operations of the
system (`core.operations`), and service errors become `CommandError`. (The institution and key
lookups are `institutions.management.base.InstitutionCommand`.)"""

from django.core.management.base import BaseCommand, CommandError

from core import operations
from core.actors import SYSTEM
from core.exceptions import TXError
from core.operations import Outcome


class TXCommand(BaseCommand):
    """A thin command: parse arguments, call a service, turn its errors into CommandError."""

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except TXError as error:
            raise CommandError(_described(error)) from None

    @staticmethod
    def run(service, /, **arguments) -> Outcome:
        """`service(**arguments)` as one operation of the system (its own durable transaction;
        events name the system; what a refusal keeps is kept)."""
        return operations.run(service, actor=SYSTEM, **arguments)

    @staticmethod
    def run_batches(service, /, **arguments):
        """A service that commits its own batches, as the system."""
        return operations.run_batches(service, actor=SYSTEM, **arguments)


def _described(error: TXError) -> str:
    """The error's message and, when it names fields, each with what is wrong (the details the
    API would answer: never a secret), so an operator knows what to change."""
    if not isinstance(error.details, dict) or not error.details:
        return error.message
    named = "; ".join(f"{field}: {reason}" for field, reason in error.details.items())
    return f"{error.message} {named}"
