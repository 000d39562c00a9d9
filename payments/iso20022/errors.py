"""The one error of the ISO 20022 library.

A document TX reads is refused whole: by the XML parser (not well-formed, a DTD), by the XSD
validator (its message, with the line and the element's path), or by a rule the XSD cannot say
(a control sum, an IBAN's check digits, an amount in fractions of a cent). Like `NachaError` for
NACHA files, the error names where: the message type, the line, the path."""

from __future__ import annotations


class Iso20022Error(ValueError):
    """A document refused (or a message TX was asked to write that it cannot): the message type
    (`pain.001.001.09`...), the line (from 1) and the element's path when known, and the reason
    (for an invalid document, the validator's own message)."""

    def __init__(
        self,
        reason: str,
        *,
        message_type: str | None = None,
        line: int | None = None,
        path: str | None = None,
    ):
        self.reason = reason
        self.message_type = message_type
        self.line = line
        self.path = path
        super().__init__(self.describe())

    def describe(self) -> str:
        where = [
            part
            for part in (
                self.message_type,
                f"line {self.line}" if self.line else None,
                self.path,
            )
            if part
        ]
        return f"{', '.join(where)}: {self.reason}" if where else self.reason
