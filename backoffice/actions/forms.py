"""What the back office's forms write, declared (docs/back-office.md, "Staff actions").

A form that writes (an add form, a change form, an inline's rows, a delete page) writes only
through a declared `FormWrite`: the service its save calls and that service's arguments from the
form. `DeclaredForms` is the base of a ModelAdmin that saves that way:

- the post of its add or change form (and of its delete page) runs as one operation of the
  staff user (`core.operations.operation`, in place of the plain transaction Django's views
  open): one durable transaction for the form's writes and the admin's `LogEntry`, the user as
  the actor of their events, what a refusal keeps. As an API request is one operation
  (`api.views.TXView`), so is a form's post: an add form with its inlines saves whole or not at
  all, which one operation per service call (`core.operations.run`) could not promise;
- inside it, `save_model`, `save_formset` and `delete_model` run the declared writes; a model's
  form with no write declared saves nothing.

The actions on selected rows are `backoffice.actions.base.StaffAction`s.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.views.decorators.debug import sensitive_variables

from core import operations
from core.actors import Actor
from core.exceptions import TXError
from core.operations import Outcome

# What Django's admin views answer without writing (no transaction, no operation).
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


def adopt(obj, saved) -> None:
    """Make the admin's unsaved `obj` the row a service just saved (`saved`), in place.

    The admin keeps using the instance its form built (for the log entry and the redirect).
    """
    for field in type(saved)._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


@dataclass(frozen=True)
class Saving:
    """A form's save as its write sees it: the admin, the request, the form's row (`obj`: the
    instance it built, or the row a delete removes) and the form (None on a delete page)."""

    model_admin: Any
    request: Any
    obj: Any
    form: Any = None

    @property
    def data(self) -> dict:
        return self.form.cleaned_data


@dataclass(frozen=True, eq=False)
class FormWrite:
    """One form's write, declared: on `page` of `model`'s admin ("add form", "change form: its
    scopes", "delete page": how the staff actions' list names it), `service(**arguments(saving,
    **values))`.

    The row the service saved becomes the form's (`adopt`), unless `then(saving, outcome)` says
    what the page keeps of it. `when(saving)`, when given, decides whether there is anything to
    write (a change form whose field did not change). A refusal (`TXError`) fails the post,
    unless `refused(saving, error)` is declared: then the write alone is undone (a part of the
    operation, `core.operations.part`) and the refusal is said on the page, the rest of the
    save going on."""

    page: str
    model: type
    service: Callable
    arguments: Callable[..., dict]
    then: Callable[[Saving, Outcome], None] | None = None
    when: Callable[[Saving], bool] | None = None
    refused: Callable[[Saving, TXError], None] | None = None

    # Its outcome may hold a secret (a new API key's): kept out of error reports.
    @sensitive_variables("result", "outcome")
    def run(self, saving: Saving, **values) -> Outcome | None:
        if self.when is not None and not self.when(saving):
            return None
        arguments = self.arguments(saving, **values)
        if self.refused is None:
            result = self.service(**arguments)
        else:
            try:
                with operations.part():
                    result = self.service(**arguments)
            except TXError as error:
                self.refused(saving, error)
                return None
        outcome = result if isinstance(result, Outcome) else Outcome(result)
        if self.then is not None:
            self.then(saving, outcome)
        elif isinstance(outcome.value, type(saving.obj)):
            adopt(saving.obj, outcome.value)
        return outcome


@dataclass(frozen=True, eq=False)
class InlineWrite:
    """An inline's rows, saved through declared writes: `save(saving, formset)` runs `writes`
    row by row and tells the formset what changed (for the admin's change message)."""

    model: type
    writes: tuple[FormWrite, ...]
    save: Callable[[Saving, Any], None]


class DeclaredForms:
    """A ModelAdmin whose forms write only through declared writes (the module docstring):
    `add_write`, `change_write`, `delete_write` (each a `FormWrite`, or None: that form writes
    nothing) and `inline_writes` (one `InlineWrite` per inline model that saves rows)."""

    add_write: FormWrite | None = None
    change_write: FormWrite | None = None
    delete_write: FormWrite | None = None
    inline_writes: tuple[InlineWrite, ...] = ()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method in SAFE_METHODS:
            return super().changeform_view(request, object_id, form_url, extra_context)
        with operations.operation(Actor(user=request.user)):
            return self._changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        if request.method in SAFE_METHODS:
            return super().delete_view(request, object_id, extra_context)
        with operations.operation(Actor(user=request.user)):
            return self._delete_view(request, object_id, extra_context)

    def save_model(self, request, obj, form, change):
        write = self._declared(self.change_write if change else self.add_write, obj)
        write.run(Saving(self, request, obj, form))

    def save_formset(self, request, form, formset, change):
        for inline in self.inline_writes:
            if formset.model is inline.model:
                inline.save(Saving(self, request, form.instance, form), formset)
                return
        # A read-only inline: it has no row to save (no add, change or delete permission).
        super().save_formset(request, form, formset, change)

    def delete_model(self, request, obj):
        self._declared(self.delete_write, obj).run(Saving(self, request, obj))

    def _declared(self, write: FormWrite | None, obj) -> FormWrite:
        # A form that may post but has no write declared is a mistake of the admin's: it says so
        # rather than save the row some other way.
        if write is None:
            raise ImproperlyConfigured(f"{type(self).__name__}: no declared write for {obj!r}.")
        return write


# --- The service forms (`backoffice.kit.ServiceFormModelAdmin`: products) ---------------------
def created(saving: Saving) -> dict:
    """A service form's add: the institution and the admin's `create_fields` given (blank ones
    left out: the service's defaults apply)."""
    data = saving.data
    fields = saving.model_admin.create_fields
    return {
        "institution": data["institution"],
        **{field: data[field] for field in fields if data.get(field) not in (None, "")},
    }


def changed_fields(saving: Saving) -> dict:
    """A service form's change: the admin's `change_fields` the staff user changed."""
    fields = saving.model_admin.change_fields
    return {field: saving.data[field] for field in saving.form.changed_data if field in fields}
