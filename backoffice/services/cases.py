"""Case work (docs/back-office.md, "Case work"): staff write notes on a row they investigate and
assign it to a colleague (or to themselves, or to nobody); each note and each assignment is an
event of the row with the staff user as its actor, and a line of its admin history (the
declared actions: `backoffice.actions.cases`).

What may be a case, and its event types, is declared once in `backoffice.case_kinds`."""

from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from core.actors import Actor
from core.exceptions import PermissionDenied, ValidationFailed
from core.operations import Outcome, changed, unchanged
from core.text import has_card_or_account_number
from events.services import emit_for

from ..case_kinds import CASE_KINDS, CaseKind
from ..locks import lock_case
from ..models import Case, CaseNote
from ..selectors import may_work_on

MAX_NOTE_LENGTH = CaseNote.MAX_LENGTH


def _kind(obj) -> CaseKind:
    kind = CASE_KINDS.get(type(obj))
    if kind is None:
        raise TypeError(f"A {type(obj).__name__} is not a case (backoffice.services.cases).")
    return kind


def _staff_user(actor: Actor):
    if actor.user is None:
        raise PermissionDenied("Only a staff user works on a case.")
    return actor.user


def _case(obj) -> Case:
    return lock_case(
        institution_id=obj.institution_id,
        content_type=ContentType.objects.get_for_model(type(obj)),
        object_id=obj.pk,
    )


def checked_note(text) -> str:
    """The note as kept: stripped, not blank, at most `MAX_NOTE_LENGTH` characters, and holding
    no card or account number (`core.text`): 400 otherwise."""
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        raise ValidationFailed("A note is required.", details={"note": "This field is required."})
    if len(text) > MAX_NOTE_LENGTH:
        raise ValidationFailed(details={"note": f"At most {MAX_NOTE_LENGTH} characters."})
    if has_card_or_account_number(text):
        raise ValidationFailed(
            "A note must not hold a card or account number.",
            details={"note": "Must not hold a card or account number: write its last four."},
        )
    return text


def case_note_add(*, obj, text: str, actor: Actor) -> CaseNote:
    """Write the staff user's note on `obj` (a row of `CASE_KINDS`), making its case if it has
    none; emits `<kind>.note_added` with the note's id."""
    kind = _kind(obj)
    author = _staff_user(actor)
    text = checked_note(text)
    note = CaseNote.objects.create(case=_case(obj), author=author, text=text)
    emit_for(obj, kind.note_added, data={"note_id": note.pk})
    return note


def case_assign(*, obj, assignee, actor: Actor) -> Outcome:
    """Assign `obj` (a row of `CASE_KINDS`) to `assignee` (a staff user who may work on it:
    403 otherwise), or to nobody (None). Emits `<kind>.assigned` with the assignee's id (and
    the one before); already so: nothing written (`Outcome.changed` false). The Outcome's
    value is the case; `previous` the assignee before."""
    kind = _kind(obj)
    by = _staff_user(actor)
    if assignee is not None and not may_work_on(assignee, obj):
        raise PermissionDenied(f"{assignee.get_username()} may not work on {obj.pk}.")
    case = _case(obj)
    previous = case.assignee
    if case.assignee_id == (assignee.pk if assignee is not None else None):
        return unchanged(case)
    case.assignee, case.assigned_by, case.assigned_at = assignee, by, timezone.now()
    case.save(update_fields=["assignee", "assigned_by", "assigned_at"])
    if kind.on_assign is not None:
        kind.on_assign(obj, assignee)
    emit_for(
        obj,
        kind.assigned,
        data={
            "assignee_id": None if assignee is None else str(assignee.pk),
            "previous_assignee_id": None if previous is None else str(previous.pk),
        },
    )
    return changed(case, previous=previous)
