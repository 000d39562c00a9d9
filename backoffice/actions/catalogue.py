"""What staff can do, listed from the declarations themselves: the table of docs/back-office.md,
"Staff actions" (printed by `manage.py staff_actions`; tests/backoffice/test_staff_surface.py
fails when the document and the declarations differ).

Read from the admin site's registry, so the list is what the pages really offer: each admin's
declared actions in their order, then its forms' declared writes.
"""

from django.contrib import admin

from .base import StaffAction
from .forms import DeclaredForms, FormWrite

HEADER = "| model | staff do | it calls | reason | four eyes |\n| --- | --- | --- | --- | --- |"


def _name(function) -> str:
    return f"`{function.__module__}.{function.__qualname__}`"


def _action_row(action: StaffAction) -> str:
    if action.reason is None:
        reason = "—"
    else:
        reason = "required" if action.reason.required else "optional"
        if action.reason.name != "reason":
            reason += f" (its {action.reason.name})"
    four_eyes = "—"
    if action.four_eyes is not None:
        four_eyes = f"{action.four_eyes.kind}, through {_name(action.four_eyes.through)}"
    page = "confirmed on a page" if action.confirmation else "on the press"
    what = f"`{action.name}`: {action.label} ({page}"
    what += f"; one {action.one}" if action.one else ""
    what += ")"
    return _row(action.model, what, action.service, reason, four_eyes)


def _form_row(write: FormWrite) -> str:
    return _row(write.model, f"its {write.page}", write.service, "—", "—")


def _row(model, what: str, service, reason: str, four_eyes: str) -> str:
    return f"| {model._meta.label} | {what} | {_name(service)} | {reason} | {four_eyes} |"


def rows() -> list[str]:
    lines = []
    for _model, model_admin in sorted(
        admin.site._registry.items(), key=lambda item: item[0]._meta.label
    ):
        for action in model_admin.actions or []:
            if isinstance(action, StaffAction):
                lines.append(_action_row(action))
        if not isinstance(model_admin, DeclaredForms):
            continue
        written = []
        for page in ("add", "change", "delete"):
            write = getattr(model_admin, f"{page}_write")
            if write is not None and write not in written:
                written.append(write)
                lines.append(_form_row(write))
        for inline in model_admin.inline_writes:
            lines += [_form_row(write) for write in inline.writes]
    return lines


def markdown() -> str:
    """The table, as docs/back-office.md holds it."""
    return "\n".join([HEADER, *rows()]) + "\n"
