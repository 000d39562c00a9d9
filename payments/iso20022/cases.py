"""The case assignment camt.056 (a recall) and camt.029 (its answer) open with: who asks whom,
when, under which id.

    Assgnmt  Id, Assgnr/Agt/FinInstnId/BICFI, Assgne/Agt/FinInstnId/BICFI, CreDtTm

The XSD lets the assigner and the assignee be a party (`Pty`) or a bank (`Agt`); between banks
in SEPA both are banks named by their BIC (the EPC's interbank guidelines), so TX writes `Agt`
and refuses a party or a bank without its BIC.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022.document import Element, find, refusal, sub, text
from payments.iso20022.fields import (
    check_bic,
    check_text,
    datetime_text,
    parse_datetime,
)
from payments.iso20022.messages import MessageType
from payments.iso20022.parties import located, read_bic


@dataclass(frozen=True, slots=True, kw_only=True)
class Assignment:
    id: str
    assigner_bic: str
    assignee_bic: str
    created_at: datetime.datetime

    def __post_init__(self):
        check_text(self.id, 35, "assignment id")
        object.__setattr__(self, "assigner_bic", check_bic(self.assigner_bic, "assigner"))
        object.__setattr__(self, "assignee_bic", check_bic(self.assignee_bic, "assignee"))


def write_assignment(body: Element, assignment: Assignment) -> Element:
    block = sub(body, "Assgnmt")
    sub(block, "Id", assignment.id)
    sub(block, "Assgnr/Agt/FinInstnId/BICFI", assignment.assigner_bic)
    sub(block, "Assgne/Agt/FinInstnId/BICFI", assignment.assignee_bic)
    sub(block, "CreDtTm", datetime_text(assignment.created_at))
    return block


def read_assignment(body: Element, message: MessageType) -> Assignment:
    block = find(body, "Assgnmt")
    banks = {}
    for tag in ("Assgnr", "Assgne"):
        party = find(block, tag)
        if find(party, "Agt") is None:
            raise refusal(party, f"{tag} is not a bank (Agt), as between banks it is", message)
        banks[tag] = read_bic(party, "Agt", message)
    return located(
        block,
        message,
        lambda: Assignment(
            id=text(block, "Id"),
            assigner_bic=banks["Assgnr"],
            assignee_bic=banks["Assgne"],
            created_at=parse_datetime(text(block, "CreDtTm"), "creation date and time"),
        ),
    )
