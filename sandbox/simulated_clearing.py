"""The simulated SEPA Instant clearing that ships with TX (docs/payments.md, "SEPA Instant"): it
takes an institution's one-transaction pain.001 (local instrument INST) and answers in real time
with a pain.002, by the creditor IBAN's scenario in the simulated bank's table
(`sandbox.simulated_bank.SEPA_SCENARIOS`, the SEPA credit transfers' own):

- a rejection scenario (AC01, AC04, AC06, AG01, AM04): `RJCT` with its reason;
- `silent` (account `0000000901`): no answer at all, after the whole timeout;
- `late` (account `0000000902`): no answer within the timeout; the settled answer (`ACSC`) is
  then put in the institution's `sepa` inbox, where the payments job reads it (TX records it
  and changes nothing: the order was rejected `TECH`);
- anything else: `ACSC`, accepted and settled.

The pain.001 is read as TX reads any file (its XSD validated, safely parsed): a file it refuses
raises, and TX treats it as no answer.
"""

import os
import time
from datetime import UTC, datetime

from payments.connector import folder
from payments.iso20022 import pain001, pain002
from payments.iso20022.status_reasons import StatusReason

from .simulated_bank import SEPA_SCENARIOS

ORIGINAL_MESSAGE = "pain.001.001.09"


class SimulatedClearing:
    def exchange(self, *, institution, content: bytes, timeout: float) -> bytes | None:
        """The clearing's answer to `content` (a pain.002), or None when it says nothing within
        `timeout` seconds."""
        initiation = pain001.read_initiation(content)
        statuses, late = [], False
        for transfer in initiation.transfers():
            scenario = SEPA_SCENARIOS.get(transfer.creditor_iban)
            kind = scenario.kind if scenario is not None else "settle"
            if kind == "silent":
                time.sleep(timeout)
                return None
            late = late or kind == "late"
            rejected = kind == "reject"
            statuses.append(
                pain002.TransactionStatus(
                    original_end_to_end_id=transfer.end_to_end_id,
                    status="RJCT" if rejected else "ACSC",
                    reasons=(StatusReason(scenario.code),) if rejected else (),
                )
            )
        answer = status_report(initiation, statuses)
        if late:
            time.sleep(timeout)
            inbox = folder(institution.pk, "sepa", "inbox")
            name = f"simulated-clearing-{initiation.message_id}.xml"
            partial = inbox / f".{name}.partial"
            partial.write_bytes(answer)
            os.replace(partial, inbox / name)
            return None
        return answer


def status_report(initiation, statuses: list) -> bytes:
    rejected = sum(each.status == "RJCT" for each in statuses)
    group = "RJCT" if rejected == len(statuses) else "PART" if rejected else "ACSC"
    return pain002.write_status_report(
        pain002.PaymentStatusReport(
            message_id=f"SIMCLR-{initiation.message_id}"[:35],
            created_at=datetime.now(UTC).replace(microsecond=0),
            original_message_id=initiation.message_id,
            original_message_type=ORIGINAL_MESSAGE,
            group_status=group,
            payments=(
                pain002.PaymentStatus(
                    original_payment_information_id=initiation.payments[0].payment_information_id,
                    transactions=tuple(statuses),
                ),
            ),
        )
    )
