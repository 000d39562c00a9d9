"""What a customer's initiation (pain.001 credit transfers, pain.008 direct debits) writes
alike: its group header, the message's id, when it was made, how many transactions and their
sum, and who initiates it. Each message's module writes its own payment blocks."""

from __future__ import annotations

import datetime

from payments.iso20022.document import Element, sub
from payments.iso20022.fields import amount_text, datetime_text


def write_group_header(
    message: Element,
    *,
    message_id: str,
    created_at: datetime.datetime,
    count: int,
    control_sum: int,
    initiating_party: str,
) -> None:
    header = sub(message, "GrpHdr")
    sub(header, "MsgId", message_id)
    sub(header, "CreDtTm", datetime_text(created_at))
    sub(header, "NbOfTxs", str(count))
    sub(header, "CtrlSum", amount_text(control_sum))
    sub(header, "InitgPty/Nm", initiating_party)
