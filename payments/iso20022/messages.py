"""The message types TX writes and reads, each with its namespace, its root element and its
official XSD in `schemas/` (schemas/SOURCES.md says where each file comes from).

The versions are those of the ISO 20022 2019 release that the EPC's SEPA rulebooks and
implementation guidelines (2023 onwards) use: pain.001.001.09, pain.008.001.08, pain.002.001.10,
camt.054.001.08 between a customer and its bank; pacs.008.001.08, pacs.003.001.08,
pacs.002.001.10, pacs.004.001.09, camt.056.001.08 and camt.029.001.09 between banks."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

SCHEMAS = Path(__file__).resolve().parent / "schemas"


@dataclass(frozen=True)
class MessageType:
    name: str  # pain.001.001.09
    root: str  # the element under Document: CstmrCdtTrfInitn
    title: str

    @property
    def namespace(self) -> str:
        return f"urn:iso:std:iso:20022:tech:xsd:{self.name}"

    @property
    def xsd(self) -> Path:
        return SCHEMAS / f"{self.name}.xsd"

    def schema(self) -> etree.XMLSchema:
        return _schema(self.name)


@functools.cache
def _schema(name: str) -> etree.XMLSchema:
    # Loaded once per process (a schema takes some 50 ms to compile). The XSDs are ours, but they
    # are read with the same locked-down parser as any document: nothing is fetched.
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    return etree.XMLSchema(etree.parse(str(SCHEMAS / f"{name}.xsd"), parser))


PAIN_001 = MessageType("pain.001.001.09", "CstmrCdtTrfInitn", "customer credit transfer initiation")
PAIN_008 = MessageType("pain.008.001.08", "CstmrDrctDbtInitn", "customer direct debit initiation")
PAIN_002 = MessageType("pain.002.001.10", "CstmrPmtStsRpt", "customer payment status report")
CAMT_054 = MessageType(
    "camt.054.001.08", "BkToCstmrDbtCdtNtfctn", "bank to customer debit credit notification"
)
PACS_008 = MessageType("pacs.008.001.08", "FIToFICstmrCdtTrf", "FI to FI customer credit transfer")
PACS_003 = MessageType("pacs.003.001.08", "FIToFICstmrDrctDbt", "FI to FI customer direct debit")
PACS_002 = MessageType("pacs.002.001.10", "FIToFIPmtStsRpt", "FI to FI payment status report")
PACS_004 = MessageType("pacs.004.001.09", "PmtRtr", "payment return")
CAMT_056 = MessageType(
    "camt.056.001.08", "FIToFIPmtCxlReq", "FI to FI payment cancellation request"
)
CAMT_029 = MessageType("camt.029.001.09", "RsltnOfInvstgtn", "resolution of investigation")
# The bank's statements (reconciliation/, docs/reconciliation.md): end of day and intraday.
CAMT_053 = MessageType("camt.053.001.08", "BkToCstmrStmt", "bank to customer statement")
CAMT_052 = MessageType("camt.052.001.08", "BkToCstmrAcctRpt", "bank to customer account report")

MESSAGE_TYPES: dict[str, MessageType] = {
    message.name: message
    for message in (
        PAIN_001,
        PAIN_008,
        PAIN_002,
        CAMT_054,
        PACS_008,
        PACS_003,
        PACS_002,
        PACS_004,
        CAMT_056,
        CAMT_029,
        CAMT_053,
        CAMT_052,
    )
}
BY_NAMESPACE: dict[str, MessageType] = {m.namespace: m for m in MESSAGE_TYPES.values()}
