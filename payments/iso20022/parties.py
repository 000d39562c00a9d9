"""Accounts and banks as every SEPA message writes them: an account by its IBAN
(`<Id><IBAN>`), a bank by its BIC (`<FinInstnId><BICFI>`) or, where the payer did not give one
(the EPC has made the BIC optional inside SEPA), `<FinInstnId><Othr><Id>NOTPROVIDED`."""

from __future__ import annotations

from payments.iso20022.document import Element, find, refusal, sub, text
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import MessageType

# What the EPC implementation guidelines put in place of a BIC that was not given.
NOT_PROVIDED = "NOTPROVIDED"


def write_account(parent: Element, tag: str, iban: str) -> None:
    sub(parent, f"{tag}/Id/IBAN", iban)


def read_account(parent: Element, tag: str, message: MessageType) -> str:
    """The IBAN of the account at `tag`; an account identified otherwise (`Othr`) is not SEPA."""
    account = find(parent, tag)
    if account is None:
        raise refusal(parent, f"{tag} is missing", message)
    iban = text(account, "Id/IBAN")
    if iban is None:
        raise refusal(account, f"{tag} is not identified by an IBAN (SEPA accounts are)", message)
    return iban


def write_agent(parent: Element, tag: str, bic: str | None) -> None:
    if bic:
        sub(parent, f"{tag}/FinInstnId/BICFI", bic)
    else:
        sub(parent, f"{tag}/FinInstnId/Othr/Id", NOT_PROVIDED)


def read_agent(parent: Element, tag: str) -> str | None:
    """The BIC of the bank at `tag`, or None when there is none (no element, or NOTPROVIDED)."""
    agent = find(parent, tag)
    if agent is None:
        return None
    return text(agent, "FinInstnId/BICFI")


def located(element: Element, message: MessageType, make):
    """`make()` (a model checking its values), its refusal placed at `element`."""
    try:
        return make()
    except Iso20022Error as error:
        if error.line is not None:
            raise
        raise refusal(element, error.reason, message) from None


def read_bic(parent: Element, tag: str, message: MessageType) -> str:
    """The BIC of the bank at `tag`, which the interbank messages require: a bank in the clearing
    is identified by its BIC (the EPC's interbank guidelines), never NOTPROVIDED."""
    bic = read_agent(parent, tag)
    if bic is None:
        where = find(parent, tag)
        raise refusal(
            parent if where is None else where,
            f"{tag} is not identified by a BIC (a bank in the clearing is)",
            message,
        )
    return bic
