"""The counts and sums a message states about its own transactions (`NbOfTxs`, `CtrlSum`, and in
the interbank messages the total settlement amount), checked by every reader like a NACHA batch
control: a document whose stated figures are not what its transactions add up to is refused
whole, at the element that states the wrong figure."""

from __future__ import annotations

from payments.iso20022.document import Element, find, refusal, text
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.fields import amount_text, check_currency, parse_amount
from payments.iso20022.messages import MessageType


def check_controls(
    block: Element,
    message: MessageType,
    count: int,
    total: int,
    *,
    sums: tuple[str, ...] = ("CtrlSum",),
) -> None:
    """`NbOfTxs` (when stated) against `count`; each of `sums` (when stated) against `total`,
    in cents. A sum with a currency (`TtlIntrBkSttlmAmt Ccy=...`) must be in EUR."""
    stated = text(block, "NbOfTxs")
    if stated is not None and int(stated) != count:
        raise refusal(
            find(block, "NbOfTxs"), f"NbOfTxs is {stated}, but there are {count}", message
        )
    for tag in sums:
        control = find(block, tag)
        if control is None:
            continue
        try:
            if control.get("Ccy") is not None:
                check_currency(control.get("Ccy"), tag)
            stated_total = parse_amount(control.text, tag)
        except Iso20022Error as error:
            raise refusal(control, error.reason, message) from None
        if stated_total != total:
            raise refusal(
                control,
                f"{tag} is {control.text}, but the amounts add up to {amount_text(total)}",
                message,
            )
