"""Case work (docs/back-office.md, "Case work"): a note on selected rows, and their assignment
(to oneself on the press, or to a colleague or nobody on a page), for every model that may be a
case (`backoffice.services.cases.CASE_KINDS`): `case_actions` makes the three declarations of
one model, which its admin lists beside its own (with `backoffice.admin.cases.CaseWork`).

Who may: whoever may change the model (`permissions=("change",)`: operations on disputes,
compliance on monitoring alerts); no second person (a note and an assignment move no money).
Each note and assignment is an event of the row with the staff user as its actor, and a line of
its admin history."""

from backoffice.actions.base import Confirmation, Reason, StaffAction, said
from backoffice.forms import CaseAssignForm, CaseNoteForm
from backoffice.selectors import possible_assignees
from backoffice.services.cases import MAX_NOTE_LENGTH, case_assign, case_note_add

NOTE_HELP = (
    "What was checked, said or decided. Kept on the case, shown to staff on its page, never "
    "sent to the institution (its event says only that a note was added). No card or account "
    "number: write its last four digits."
)
ASSIGN_HELP = "Why (optional): written in the admin history."
TEMPLATE = "admin/case_confirmation.html"


def _name(user) -> str:
    return "nobody" if user is None else user.get_username()


def case_actions(*, model, noun: str) -> list[StaffAction]:
    """`model`'s case actions: "add_notes", "assign_to_me", "assign"; `noun` names its rows."""
    add_notes = StaffAction(
        name="add_notes",
        label=f"Add a note to selected {noun}s (asks for the note)",
        model=model,
        service=case_note_add,
        arguments=lambda row, asked: {"obj": row, "text": asked.reason},
        reason=Reason(name="note", max_length=MAX_NOTE_LENGTH, help_text=NOTE_HELP),
        form=lambda data, rows: CaseNoteForm(data, help_text=NOTE_HELP, max_length=MAX_NOTE_LENGTH),
        confirmation=Confirmation(
            template=TEMPLATE,
            title=f"Add a note: {noun}s",
            submit=f"Add the note to {{n}} {noun}(s)",
            context={"noun": noun},
        ),
        verb="Add a note",
        history=lambda outcome, asked: (
            f"Note {outcome.value.pk} added (admin action “Add a note”)."
        ),
        done=f"Added a note to {{n}} {noun}(s).",
        already="Left as they were: {ids}.",  # a note is always written
    )
    assign_to_me = StaffAction(
        name="assign_to_me",
        label=f"Assign selected {noun}s to me",
        model=model,
        service=case_assign,
        arguments=lambda row, asked: {"obj": row, "assignee": asked.user},
        verb="Assign to me",
        history=lambda outcome, asked: (
            f"Assigned to {_name(outcome.value.assignee)}, was {_name(outcome.previous)} "
            "(admin action “Assign to me”)."
        ),
        done=f"Assigned {{n}} {noun}(s) to you.",
        already="Already yours, left as they were: {ids}.",
    )
    assign = StaffAction(
        name="assign",
        label=f"Assign selected {noun}s to a colleague, or to nobody",
        model=model,
        service=case_assign,
        arguments=lambda row, asked: {"obj": row, "assignee": asked["assignee"]},
        reason=Reason(required=False, help_text=ASSIGN_HELP),
        form=lambda data, rows: CaseAssignForm(
            data, users=possible_assignees(rows), help_text=ASSIGN_HELP
        ),
        confirmation=Confirmation(
            template=TEMPLATE,
            title=f"Assign {noun}s",
            submit=f"Assign {{n}} {noun}(s)",
            context={"noun": noun},
        ),
        verb="Assign",
        history=lambda outcome, asked: (
            f"Assigned to {_name(outcome.value.assignee)}, was {_name(outcome.previous)} "
            f"(admin action “Assign”; {said(asked.reason)})."
        ),
        done=f"Assigned {{n}} {noun}(s).",
        already="Already so assigned, left as they were: {ids}.",
    )
    return [add_notes, assign_to_me, assign]
