"""A status reason as pain.002 and pacs.002 carry it (`<StsRsnInf>`), and a return reason as
pacs.004 carries it (`<RtrRsnInf>`, the same shape): who gave it (the originator's BIC,
`<Orgtr><Id><OrgId><AnyBIC>`, optional), a code (ISO's external code, `<Rsn><Cd>`, or a
proprietary one, `<Rsn><Prtry>`) and up to a few lines of additional information. The code is
kept as sent; `codes.reason` gives its normalized name."""

from __future__ import annotations

from dataclasses import dataclass

from payments.iso20022 import codes
from payments.iso20022.document import Element, findall, sub, text
from payments.iso20022.fields import check_bic, check_text

ADDITIONAL_LIMIT = 105
NARRATIVE = "NARR"


@dataclass(frozen=True, slots=True)
class StatusReason:
    code: str
    proprietary: bool = False
    additional_information: tuple[str, ...] = ()
    originator_bic: str | None = None

    def __post_init__(self):
        check_text(self.code, 4 if not self.proprietary else 35, "status reason code")
        object.__setattr__(self, "additional_information", tuple(self.additional_information))
        for line in self.additional_information:
            check_text(line, ADDITIONAL_LIMIT, "status reason additional information")
        if self.originator_bic is not None:
            object.__setattr__(self, "originator_bic", check_bic(self.originator_bic, "originator"))

    @property
    def normalized(self) -> str:
        return "unknown" if self.proprietary else codes.reason(self.code).normalized


ORIGINATOR_BIC = "Orgtr/Id/OrgId/AnyBIC"


def write_reasons(
    parent: Element, reasons: tuple[StatusReason, ...], tag: str = "StsRsnInf"
) -> None:
    for reason in reasons:
        information = sub(parent, tag)
        if reason.originator_bic:
            sub(information, ORIGINATOR_BIC, reason.originator_bic)
        sub(information, "Rsn/Prtry" if reason.proprietary else "Rsn/Cd", reason.code)
        for line in reason.additional_information:
            sub(information, "AddtlInf", line)


def read_reasons(parent: Element, tag: str = "StsRsnInf") -> tuple[StatusReason, ...]:
    """The reasons under `parent`. A reason given only as free text (no `<Rsn>`) is read with
    ISO's code NARR ("narrative"); one with neither (only its originator) says nothing and is
    not kept."""
    reasons = []
    for information in findall(parent, tag):
        additional = tuple(each.text or "" for each in findall(information, "AddtlInf"))
        code, proprietary = text(information, "Rsn/Cd"), False
        if code is None and text(information, "Rsn/Prtry") is not None:
            code, proprietary = text(information, "Rsn/Prtry"), True
        if code is None:
            if not additional:
                continue
            code = NARRATIVE
        reasons.append(
            StatusReason(code, proprietary, additional, text(information, ORIGINATOR_BIC))
        )
    return tuple(reasons)
