"""What a staff action is, and the one flow that runs every one (docs/back-office.md, "Staff
actions").

A `StaffAction` declares one thing staff do to selected rows: the model, the service it calls
and that service's arguments for one row, what it asks (a reason, required or optional, or a
form of its own), its four-eyes policy (None, or one of `backoffice.actions.four_eyes`), its
confirmation page, the admin history's words for a change and its messages. The shape is
Django's own `delete_selected` (django/contrib/admin/actions.py and its one template): ask,
confirm, apply.

- **Ask**: an action with a `confirmation` answers its first post with that page (the rows, the
  form); the page posts back with `CONFIRM`, and only a valid form goes on. Without a valid
  reason the page comes again with the form's error, and nothing has changed. An action with
  no confirmation runs on the press.
- **Apply**: each row is one operation of the staff user (`core.operations.run`: its own
  durable transaction, the user as the actor of its events, what a refusal keeps), with one
  `LogEntry` for a changed row in the same transaction. A row the service left as it was
  (`Outcome.changed` false) is named in one `already` message, a refusal (`TXError`) in one
  message of its own (that row alone is left as it was), and the changed in one `done`.
- **What is offered** follows the row and the user: `applies(row, user)` says whether the
  action applies to the row now (its state, who asked for it), and a row's page offers only
  those that do (an approved request no Approve, a requester no decision of their own
  request). A press from a page the row has changed since is refused before anything is
  asked; the services still refuse what they must, whatever a page offered.
- **Four eyes** is a property of the declaration: an action with a policy runs the policy's
  entry (`backoffice.services.staff_changes`) instead of its service, which makes the change at
  once within the institution's threshold and otherwise asks for it (an `ApprovalRequest` that
  a second staff user decides, `backoffice.services.approvals`); the history and the messages
  say which.

A ModelAdmin lists its declarations in `actions`: Django takes a callable there and calls it as
`action(model_admin, request, queryset)`, with the declaration's `__name__`, `short_description`
and `allowed_permissions`. So the names, labels and permissions staff see are the
declarations', and no admin defines an action of its own (tests/test_imports.py).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ImproperlyConfigured

from backoffice.kit import CONFIRM, MAX_REASON, RETURN_TO_OBJECT, ReasonForm, confirmation_page
from core import operations
from core.actors import Actor
from core.exceptions import TXError
from core.operations import Outcome

from .four_eyes import FourEyes, staff_change_described, staff_changes_done


@dataclass(frozen=True)
class Reason:
    """The reason an action asks for on its confirmation page: `required` or optional, what
    `help_text` says of where it is kept, at most `max_length` characters, in the form's field
    `name` (an alert's is its "note")."""

    required: bool = True
    help_text: str = ""
    max_length: int = MAX_REASON
    name: str = "reason"

    def form(self, data) -> forms.Form:
        return ReasonForm(
            data,
            required=self.required,
            help_text=self.help_text,
            max_length=self.max_length,
            name=self.name,
        )


@dataclass(frozen=True)
class Confirmation:
    """An action's confirmation page: `template` (extending admin/action_confirmation.html) with
    `title`, the submit button's `submit` (`{n}`: how many rows), `rows` (one dict per row,
    for the template's table, when it needs more than the rows themselves) and `context`."""

    template: str
    title: str
    submit: str
    rows: Callable[[Any], dict] | None = None
    context: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LeftOut:
    """Rows an action does not try (`which(row)`), each said (`said(rows)`: the messages, at
    `level`) before the others are applied and left as they are: what the service must not be
    asked, or what is known to be refused."""

    which: Callable[[Any], bool]
    said: Callable[[list], list[str]]
    level: int = messages.ERROR


@dataclass(frozen=True)
class Asked:
    """What the staff user gave: the confirmation form's cleaned data (empty for an action that
    asks nothing), its reason (`reason`, "" when none), and who they are (`user`)."""

    data: dict
    user: Any
    reason: str = ""

    def __getitem__(self, name: str):
        return self.data[name]


@dataclass(frozen=True, eq=False)
class StaffAction:
    """One staff write of the back office, declared once (the module docstring).

    `name` is the action's name (a changelist post's `action`, a page's button) and `label` its
    description (the button drops "selected "). `service(**arguments(row, asked))` runs once
    per row; `history(outcome, asked)` is the row's LogEntry, `done` (`{n}`, or a function of
    the changed outcomes) and `already` (`{ids}`) the messages. With `four_eyes`, the policy's
    entry runs instead (with the same `arguments`) and makes `service`'s change or asks for
    it; the history is `made(row, asked)` (what is made, said before it runs) or the request,
    under the action's `verb`, and the message says how many were made and how many asked.

    What it asks: `reason` (a `Reason`), or a `form(data, rows)` of its own (which holds the
    reason, if any); shown on `confirmation`. `one` (what to select: "account to adjust")
    makes it an action on exactly one row, `at_most` = (n, message) on at most n;
    `select_related` loads what its page and history read; `left_out` is not tried;
    `record(model_admin, request, row, outcome)` records more of a change in its transaction;
    `respond(model_admin, request, changed)` answers instead of going back to the list.

    `applies(row, user)`: whether the action applies to `row` for `user` now (None: always,
    but never to a row `left_out`). A row's page offers it only then (`applies_to`), and a
    press from a row's page is refused when it no longer does; the service still decides.
    """

    name: str
    label: str
    model: type
    service: Callable
    arguments: Callable[[Any, Asked], dict]
    already: str
    verb: str = ""
    history: Callable[[Outcome, Asked], str] | None = None
    done: str | Callable[[list[Outcome]], str] | None = None
    four_eyes: FourEyes | None = None
    made: Callable[[Any, Asked], str] | None = None
    reason: Reason | None = None
    form: Callable[[Any, list], forms.Form] | None = None
    confirmation: Confirmation | None = None
    one: str | None = None
    at_most: tuple[int, str] | None = None
    select_related: tuple[str, ...] = ()
    left_out: LeftOut | None = None
    record: Callable | None = None
    respond: Callable | None = None
    applies: Callable[[Any, Any], bool] | None = None
    permissions: tuple[str, ...] = ("change",)

    def __post_init__(self):
        # A declaration that cannot run as declared fails when Django starts, not when used.
        if self.four_eyes is not None:
            _require(self.four_eyes.makes is self.service, self, "four_eyes makes its service")
            _require(self.made is not None and self.verb, self, "four_eyes needs made and verb")
            _require(self.history is None and self.done is None, self, "four_eyes has its words")
        else:
            _require(self.history is not None and self.done is not None, self, "history, done")
        _require(self.form is None or self.reason is not None, self, "a form declares its reason")
        _require(
            self.confirmation is not None or (self.form is None and self.reason is None),
            self,
            "what it asks is asked on a confirmation page",
        )
        # What Django's admin reads of an action (`ModelAdmin.get_action`, its permissions).
        object.__setattr__(self, "__name__", self.name)
        object.__setattr__(self, "short_description", self.label)
        object.__setattr__(self, "allowed_permissions", self.permissions)

    def applies_to(self, row, user) -> bool:
        """Whether the action applies to `row` for `user` now: what a row's page offers."""
        if self.left_out is not None and self.left_out.which(row):
            return False
        return self.applies is None or bool(self.applies(row, user))

    @property
    def runs(self) -> Callable:
        """What one row's operation calls: the four-eyes entry, or the service itself."""
        return self.four_eyes.through if self.four_eyes is not None else self.service

    # --- ask -> confirm -> apply ---------------------------------------------------------------
    def __call__(self, model_admin, request, queryset):
        """The action, as the changelist (or a row's button) posts it: None goes back to the
        list, or to the row's page."""
        if self.select_related:  # (with no names, select_related() would follow every key)
            queryset = queryset.select_related(*self.select_related)
        rows = list(queryset.order_by("pk"))
        if RETURN_TO_OBJECT in request.POST and not all(
            self.applies_to(row, request.user) for row in rows
        ):
            # Pressed on a row's page that offered it, and the row has changed since (or the
            # post was made up): nothing is asked, nothing runs; back to the page as it is now.
            for row in rows:
                if not self.applies_to(row, request.user):
                    model_admin.message_user(request, self.stale(row), messages.WARNING)
            return None
        if self.one is not None and len(rows) != 1:
            model_admin.message_user(request, f"Select one {self.one}.", messages.WARNING)
            return None
        if self.at_most is not None and len(rows) > self.at_most[0]:
            model_admin.message_user(request, self.at_most[1], messages.ERROR)
            return None
        if self.confirmation is None:
            return self.apply(model_admin, request, rows, Asked({}, request.user))
        form = self.ask(request.POST if CONFIRM in request.POST else None, rows)
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            reason = data.get(self.reason.name, "") if self.reason is not None else ""
            return self.apply(model_admin, request, rows, Asked(data, request.user, reason))
        page = self.confirmation
        context = dict(page.context)
        if page.rows is not None:
            context["rows"] = [page.rows(row) for row in rows]
        return confirmation_page(
            model_admin,
            request,
            template=page.template,
            title=page.title,
            form=form,
            action_name=self.name,
            confirm_name=CONFIRM,
            objects=rows,
            submit_label=page.submit.format(n=len(rows)),
            **context,
        )

    def stale(self, row) -> str:
        """What a refused press from a row's page says."""
        return (
            f"{row.pk}: “{self.offered}” does not apply to it now, so nothing was done. Its "
            "page shows what it is now and what can be done."
        )

    @property
    def offered(self) -> str:
        """The action's words on a row's page (its label without "selected ")."""
        return self.label.replace("selected ", "", 1)

    def ask(self, data, rows: list) -> forms.Form:
        """The confirmation page's form: the action's own, its reason, or nothing to fill in."""
        if self.form is not None:
            return self.form(data, rows)
        if self.reason is not None:
            return self.reason.form(data)
        return forms.Form(data)

    def apply(self, model_admin, request, rows: list, asked: Asked):
        if self.left_out is not None:
            left = [row for row in rows if self.left_out.which(row)]
            rows = [row for row in rows if not self.left_out.which(row)]
            for message in self.left_out.said(left) if left else []:
                model_admin.message_user(request, message, self.left_out.level)
        changed = apply_each(
            model_admin,
            request,
            rows,
            self.runs,
            arguments=lambda row: self.arguments(row, asked),
            describe=lambda row: self._describe(row, asked),
            done=staff_changes_done if self.four_eyes is not None else self.done,
            already=self.already,
            record=(
                None
                if self.record is None
                else lambda row, outcome: self.record(model_admin, request, row, outcome)
            ),
        )
        if self.respond is not None:
            return self.respond(model_admin, request, changed)
        return None

    def _describe(self, row, asked: Asked) -> Callable[[Outcome], str]:
        """The history's words for `row`, fixed before its operation runs (what a four-eyes
        change makes is said from the row as it was)."""
        if self.four_eyes is None:
            return lambda outcome: self.history(outcome, asked)
        made = self.made(row, asked)
        return lambda outcome: staff_change_described(outcome.value, made, self.verb, asked.reason)


def _require(condition, action: StaffAction, what: str) -> None:
    if not condition:
        raise ImproperlyConfigured(f"Staff action {action.name!r}: {what}.")


def apply_each(
    model_admin,
    request,
    rows,
    service: Callable,
    *,
    arguments: Callable[[Any], dict],
    describe: Callable[[Any], Callable[[Outcome], str]],
    done: str | Callable[[list[Outcome]], str],
    already: str,
    record: Callable[[Any, Outcome], None] | None = None,
) -> list[Outcome]:
    """The loop of every staff action: for each row, `service(**arguments(row))` runs as one
    operation of the staff user (`core.operations.run`: its own transaction, the user as the
    actor of its events, what a refusal keeps). A changed row gets one LogEntry
    (`describe(row)(outcome)`) in the same transaction; a row the service left as it was
    (`Outcome.changed` false) is listed in one `already` message (with `{ids}`); a refusal
    (TXError) is reported for that row alone and changes nothing of it. Then one `done`
    message (with `{n}`; or `done(outcomes)`) for the changed. `record(row, outcome)`, when
    given, records more of a change in its transaction (a rotated key's successor). Returns
    the outcomes that changed."""
    actor = Actor(user=request.user)
    changed, unchanged = [], []

    for row in rows:
        words = describe(row)

        def log(outcome: Outcome, row=row, words=words) -> None:
            # On the selected row, as the service left it when it hands that row back (a
            # reversal's transfer is logged on the transfer).
            if outcome.changed:
                logged = outcome.value if isinstance(outcome.value, type(row)) else row
                model_admin.log_change(request, logged, words(outcome))
                if record is not None:
                    record(row, outcome)

        try:
            outcome = operations.run(service, actor=actor, then=log, **arguments(row))
        except TXError as exc:
            failure(model_admin, request, row.pk, exc)
            continue
        if outcome.changed:
            changed.append(outcome)
        else:
            unchanged.append(str(row.pk))
    if changed:
        message = done(changed) if callable(done) else done.format(n=len(changed))
        model_admin.message_user(request, message, messages.SUCCESS)
    if unchanged:
        model_admin.message_user(request, already.format(ids=", ".join(unchanged)), messages.INFO)
    return changed


def failure(model_admin, request, row_id: str, exc: TXError) -> None:
    model_admin.message_user(request, f"{row_id}: {exc.message}", messages.ERROR)


def said(reason: str) -> str:
    """How a reason reads in an admin history's change message."""
    return f"reason: “{reason}”" if reason else "no reason given"


# --- Families of actions: one declaration for the several a model has ---------------------------
@dataclass(frozen=True)
class Move:
    """One status a status action moves rows to: the action's `name` and `label`, the `status`,
    the `verb` of the history, the page's title and button ("Freeze"), the `past` tense of its
    message ("Froze"), and its `reason`."""

    name: str
    label: str
    status: str
    verb: str
    past: str
    reason: Reason


def status_actions(
    *,
    model: type,
    service: Callable,
    noun: str,
    moves: list[Move],
    arguments: Callable[[Any, str, Asked], dict],
    template: str,
    transitions: dict[str, set[str]],
    rows: Callable[[Any], dict] | None = None,
    select_related: tuple[str, ...] = (),
    left_out: LeftOut | None = None,
) -> list[StaffAction]:
    """A model's status actions, one per `moves`: each asks its reason on `template` (with the
    `status` and the `verb` in its context), calls `service(**arguments(row, status, asked))`
    and writes "Status active → frozen (admin action “Freeze”; reason: “…”)." in the history;
    `noun` names the rows in its title and messages ("account"). Each applies to a row whose
    status may move to its own (`transitions`, the service's table: from a status, those it may
    go to)."""
    return [
        StaffAction(
            name=move.name,
            label=move.label,
            model=model,
            service=service,
            arguments=lambda row, asked, status=move.status: arguments(row, status, asked),
            verb=move.verb,
            history=lambda outcome, asked, verb=move.verb: (
                f"Status {outcome.previous} → {outcome.value.status} "
                f"(admin action “{verb}”; {said(asked.reason)})."
            ),
            done=f"{move.past} {{n}} {noun}(s).",
            already=f"Already {move.status}, left as they were: {{ids}}.",
            reason=move.reason,
            confirmation=Confirmation(
                template=template,
                title=f"{move.verb} {noun}s",
                submit=f"{move.verb} {{n}} {noun}(s)",
                rows=rows,
                context={"status": move.status, "verb": move.verb},
            ),
            select_related=select_related,
            left_out=left_out,
            applies=lambda row, user, status=move.status: status in transitions[row.status],
        )
        for move in moves
    ]


def enable_actions(
    *,
    model: type,
    service: Callable,
    noun: str,
    names: tuple[str, str],
    labels: tuple[str, str],
    arguments: Callable[[Any, bool], dict],
) -> list[StaffAction]:
    """A model's "Enable" and "Disable" (`names`, `labels`), on the press: each calls
    `service(**arguments(row, enabled))`; `noun` names the rows in the messages ("rule"). Each
    applies to a row switched the other way (its `enabled`)."""
    return [
        StaffAction(
            name=name,
            label=label,
            model=model,
            service=service,
            arguments=lambda row, asked, enabled=enabled: arguments(row, enabled),
            verb=verb,
            history=lambda outcome, asked, verb=verb, past=past: f"{past} (admin action “{verb}”).",
            done=f"{past} {{n}} {noun}(s).",
            already=f"Already {past.lower()}, left as they were: {{ids}}.",
            applies=lambda row, user, enabled=enabled: row.enabled != enabled,
        )
        for enabled, name, label, verb, past in (
            (True, names[0], labels[0], "Enable", "Enabled"),
            (False, names[1], labels[1], "Disable", "Disabled"),
        )
    ]
