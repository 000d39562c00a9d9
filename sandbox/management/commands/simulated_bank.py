import time

from django.core.management.base import CommandError

from cards.dates import today_of
from core.exceptions import ValidationFailed
from core.management.base import TXCommand
from institutions.services import institution_get
from payments.calendar import ach_days_after, is_ach_day
from payments.iso20022.codes import RECALL_REASONS
from payments.iso20022.errors import Iso20022Error
from payments.models import InboundEntry
from payments.sepa import checked_creditor_identifier, checked_iban
from sandbox.rails_clock import rails_play
from sandbox.simulated_bank import (
    Incoming,
    IncomingSepa,
    banked_institutions,
    simulated_bank_run,
    simulated_bank_send,
    simulated_sepa_bank_recall,
    simulated_sepa_bank_send,
)
from sandbox.simulated_clearing import (
    cleared_institutions,
    offer_credit,
    send_collection,
    send_credit,
    simulated_clearing_run,
)


class Command(TXCommand):
    help = (
        "The simulated sponsor bank (docs/payments.md, 'The simulated bank'): answers the files "
        "TX delivered into each institution's ACH outbox with real NACHA return and change "
        "files in its inbox, by the scenario each entry's account number names (and the simulated "
        "clearing answers an interbank SEPA profile's pacs.008 and pacs.003 files). --every keeps "
        "answering; --send-credit and --send-debit forward another bank's entry to one of the "
        "institution's accounts; --days plays days of the rails ahead (the sandbox only)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every",
            type=int,
            metavar="SECONDS",
            help="Answer again every SECONDS, until stopped.",
        )
        parser.add_argument(
            "--days",
            type=int,
            help="Play this many days of the rails, hour by hour: cut-offs, answers, settlement "
            "(SANDBOX_CLOCK only: payments settle ahead of their dates).",
        )
        for direction in ("credit", "debit"):
            parser.add_argument(
                f"--send-{direction}",
                nargs=2,
                metavar=("ACCOUNT_NUMBER", "CENTS"),
                help=f"Another bank's {direction} of CENTS to the account, settling today (the "
                "next ACH day when today is not one).",
            )
        parser.add_argument(
            "--send-sepa-credit",
            nargs=2,
            metavar=("IBAN", "CENTS"),
            help="Another bank's customer's SEPA credit of CENTS to the account at IBAN, booked "
            "today by the partner bank (a camt.054 in the sepa inbox; docs/payments.md, "
            "'Inbound SEPA').",
        )
        parser.add_argument(
            "--send-instant-credit",
            nargs=2,
            metavar=("IBAN", "CENTS"),
            help="The same by SEPA Instant: the simulated clearing offers it to the institution "
            "whose bank code the IBAN carries and prints TX's answer.",
        )
        parser.add_argument(
            "--send-clearing-credit",
            nargs=2,
            metavar=("IBAN", "CENTS"),
            help="The same by a SEPA Credit Transfer through the clearing, to a bank in it (an "
            "interbank profile): the simulated clearing delivers a pacs.008 in the sepa inbox of "
            "the institution whose bank code the IBAN carries.",
        )
        parser.add_argument(
            "--recall-credit",
            nargs=2,
            metavar=("INBOUND_ENTRY_ID", "REASON"),
            help="The bank that sent a SEPA credit the institution received recalls it (REASON: "
            "DUPL, TECH, FRAD, AC03, AM09 or CUST): a camt.056 in the sepa inbox, for TX to "
            "answer (docs/payments.md, 'Recalls TX answers').",
        )
        parser.add_argument(
            "--send-direct-debit",
            nargs=4,
            metavar=("IBAN", "CENTS", "CREDITOR_ID", "MANDATE_REFERENCE"),
            help="Another bank's creditor collects CENTS from the account at IBAN under its "
            "mandate: the simulated clearing presents a pacs.003 in the sepa inbox of the "
            "institution whose bank code the IBAN carries (docs/payments.md, 'Inbound direct "
            "debits').",
        )
        parser.add_argument("--institution", help="Institution id or name (with --send-...).")
        parser.add_argument(
            "--company-id",
            default=Incoming.company_id,
            help="The originator's Company Identification in the batch header (with --send-...; "
            f"1 to 10 printable ASCII characters; default {Incoming.company_id}): what a stop "
            "payment names.",
        )

    def handle(self, *args, **options):
        for direction in ("credit", "debit"):
            sent = options[f"send_{direction}"]
            if sent:
                self._send(options["institution"], direction, *sent, options["company_id"])
        if options["send_sepa_credit"]:
            self._send_sepa(options["institution"], *options["send_sepa_credit"])
        if options["send_instant_credit"]:
            self._send_instant(*options["send_instant_credit"])
        if options["send_clearing_credit"]:
            self._send_clearing_credit(*options["send_clearing_credit"])
        if options["recall_credit"]:
            self._recall(*options["recall_credit"])
        if options["send_direct_debit"]:
            self._send_direct_debit(*options["send_direct_debit"])
        if options["days"] is not None:
            if not 1 <= options["days"] <= 10:
                raise CommandError("--days: 1 to 10.")
            hours = self.run_batches(rails_play, days=options["days"])
            self.stdout.write(f"Played {hours} hours of the rails.")
            return
        while True:
            for institution in banked_institutions():
                for name in simulated_bank_run(institution=institution):
                    self.stdout.write(f"{institution.pk}: wrote {name}")
            for institution in cleared_institutions():
                for name in simulated_clearing_run(institution=institution):
                    self.stdout.write(f"{institution.pk}: wrote {name}")
            if not options["every"]:
                return
            time.sleep(options["every"])

    def _send(self, reference, direction, account_number, cents, company_id):
        if not reference:
            raise CommandError("--institution is needed with --send-credit and --send-debit.")
        if not cents.isdigit() or int(cents) <= 0:
            raise CommandError("CENTS: a positive whole number.")
        if not (
            0 < len(company_id) <= 10
            and company_id.strip()
            and company_id.isascii()
            and company_id.isprintable()
        ):
            raise CommandError("--company-id: 1 to 10 printable ASCII characters.")
        institution = institution_get(reference=reference)
        today = today_of(institution)
        name = simulated_bank_send(
            institution=institution,
            entries=[Incoming(direction, account_number, int(cents), company_id=company_id)],
            settles_on=today
            if is_ach_day(institution, today)
            else ach_days_after(institution, today, 1),
        )
        self.stdout.write(f"{institution.pk}: wrote {name} into the inbox")

    def _send_sepa(self, reference, iban, cents):
        if not reference:
            raise CommandError("--institution is needed with --send-sepa-credit.")
        institution = institution_get(reference=reference)
        name = simulated_sepa_bank_send(
            institution=institution,
            credits=[IncomingSepa(_iban(iban), _cents(cents))],
            today=today_of(institution),
        )
        self.stdout.write(f"{institution.pk}: wrote {name} into the sepa inbox")

    def _recall(self, inbound_entry_id, reason):
        if reason not in RECALL_REASONS:
            raise CommandError("REASON: one of " + ", ".join(sorted(RECALL_REASONS)) + ".")
        inbound = (
            InboundEntry.objects.filter(pk=inbound_entry_id, rail__in=["sepa_ct", "sepa_inst"])
            .select_related("institution")
            .first()
        )
        if inbound is None:
            raise CommandError("INBOUND_ENTRY_ID: no SEPA credit with this id.")
        name = simulated_sepa_bank_recall(
            institution=inbound.institution,
            inbound_entry=inbound,
            reason=reason,
            today=today_of(inbound.institution),
        )
        self.stdout.write(f"{inbound.institution_id}: wrote {name} into the sepa inbox")

    def _send_direct_debit(self, iban, cents, creditor_id, reference):
        try:
            creditor_id = checked_creditor_identifier(creditor_id)
        except ValidationFailed:
            raise CommandError("CREDITOR_ID: not a SEPA creditor identifier.") from None
        try:
            institution, name = send_collection(
                iban=_iban(iban),
                amount=_cents(cents),
                creditor_id=creditor_id,
                mandate_reference=reference,
            )
        except (ValueError, Iso20022Error) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{institution.pk}: wrote {name} into the sepa inbox")

    def _send_clearing_credit(self, iban, cents):
        try:
            institution, name = send_credit(iban=_iban(iban), amount=_cents(cents))
        except (ValueError, Iso20022Error) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{institution.pk}: wrote {name} into the sepa inbox")

    def _send_instant(self, iban, cents):
        offered = offer_credit(
            iban=_iban(iban), amount=_cents(cents), transaction_id=f"SIM{time.time_ns()}"
        )
        answer = offered.status or "no answer in time"
        reason = f" {offered.reason}" if offered.reason else ""
        self.stdout.write(f"{answer}{reason} in {offered.seconds * 1000:.0f} ms")


def _cents(cents: str) -> int:
    if not cents.isdigit() or int(cents) <= 0:
        raise CommandError("CENTS: a positive whole number.")
    return int(cents)


def _iban(iban: str) -> str:
    try:
        return checked_iban(iban)
    except ValidationFailed as refused:
        raise CommandError(f"IBAN: {refused.details['iban']}") from None
