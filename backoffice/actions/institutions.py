"""What staff do to institutions and their access: add an institution, add and remove its
holidays, grant and take away a staff user's institution; revoke and rotate API keys, add one,
change its scopes and its allowlist (docs/tenancy-and-keys.md, docs/calendar.md).

Each leaves a `LogEntry` naming the action and the public key id or prefix, never a secret. A
new secret (a key rotated here, or added by the key's form) is shown once, on a page of its own
answering the POST that made it (`secrets_page`, `Cache-Control: no-store`); it never goes into
the messages framework, its cookie or the session, nor into any table.
"""

from django.contrib import messages
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.debug import sensitive_variables

from backoffice.actions.base import StaffAction
from backoffice.actions.forms import FormWrite, InlineWrite, Saving, adopt
from core.exceptions import NotFound, TXError, ValidationFailed
from institutions.models import AllowedNetwork, ApiKey, Holiday, Institution, InstitutionAccess
from institutions.services import (
    IssuedKey,
    allowlist_add,
    allowlist_remove,
    api_key_create,
    api_key_revoke,
    api_key_rotate,
    api_key_set_scopes,
    holiday_add,
    holiday_remove,
    institution_access_grant,
    institution_access_remove,
    institution_create,
)

# --- Institutions, their calendars, staff access --------------------------------------------
# Made with its account products (`institution_created`); never changed here.
add_institution = FormWrite(
    page="add form",
    model=Institution,
    service=institution_create,
    arguments=lambda saving: {
        "name": saving.data["name"],
        "currency": saving.data["currency"],
        "time_zone": saving.data["time_zone"],
        "weekend_days": saving.data.get("weekend_days"),
    },
    # `institution_create` answers (institution, created).
    then=lambda saving, outcome: adopt(saving.obj, outcome.value[0]),
)
# A date that is a holiday already is refused by the form's unique check. Never edited: a holiday
# with the wrong date or name is removed and added again.
add_holiday = FormWrite(
    page="add form",
    model=Holiday,
    service=holiday_add,
    arguments=lambda saving: {
        "institution": saving.data["institution"],
        "date": saving.data["date"],
        "name": saving.data["name"],
    },
)
remove_holiday = FormWrite(
    page="delete page",
    model=Holiday,
    service=holiday_remove,
    arguments=lambda saving: {"holiday": saving.obj},
)
grant_institution = FormWrite(
    page="add form",
    model=InstitutionAccess,
    service=institution_access_grant,
    arguments=lambda saving: {
        "user": saving.data["user"],
        "institution": saving.data["institution"],
    },
)
remove_institution_access = FormWrite(
    page="delete page",
    model=InstitutionAccess,
    service=institution_access_remove,
    arguments=lambda saving: {"access": saving.obj},
)


# --- API keys ---------------------------------------------------------------------------------
# Each new secret must be copied from the one page that shows it: a handful at a time.
MAX_KEYS_ROTATED_AT_ONCE = 5


@sensitive_variables("issued")
def secrets_page(model_admin, request, issued: list[IssuedKey], *, title: str) -> TemplateResponse:
    """The one page that shows new secrets: the answer to the POST that made them, never
    stored or cached anywhere (no message, no session, `Cache-Control: no-store`)."""
    response = TemplateResponse(
        request,
        "admin/institutions/apikey/new_secrets.html",
        {
            **model_admin.admin_site.each_context(request),
            "title": title,
            "subtitle": None,
            "opts": model_admin.opts,
            "issued": [
                {
                    "api_key": item.api_key,
                    "secret": item.secret,
                    "change_url": reverse(
                        "admin:institutions_apikey_change", args=[item.api_key.pk]
                    ),
                }
                for item in issued
            ],
        },
    )
    add_never_cache_headers(response)  # Cache-Control: max-age=0, no-cache, no-store, ...
    response["Pragma"] = "no-cache"
    return response


revoke_keys = StaffAction(
    name="revoke_keys",
    label="Revoke selected API keys (at once)",
    model=ApiKey,
    service=api_key_revoke,
    arguments=lambda api_key, asked: {"api_key": api_key, "revoked_by": asked.user.get_username()},
    history=lambda outcome, asked: "Revoked (admin action “Revoke”).",
    done="Revoked {n} API key(s).",
    already="Already revoked, left as they were: {ids}.",
)


def _rotated(outcome, verb: str, retire_now: bool) -> str:
    old, new_key = outcome.value.replaces, outcome.value.api_key
    retired = (
        f"this key was revoked at {old.revoked_at.isoformat()}"
        if retire_now
        else f"this key expires at {old.expires_at.isoformat()}"
    )
    return (
        f"Rotated (admin action “{verb}”): successor {new_key.id} (prefix {new_key.prefix}); "
        f"{retired}."
    )


def _successor_logged(model_admin, request, api_key, outcome) -> None:
    model_admin.log_addition(
        request, outcome.value.api_key, f"Created by rotating {api_key.id} (admin action)."
    )


@sensitive_variables("changed")
def _new_secrets(model_admin, request, changed):
    if not changed:
        return None
    issued = [outcome.value for outcome in changed]
    return secrets_page(model_admin, request, issued, title="Rotated API keys: copy them now")


def _rotate(name: str, label: str, *, retire_now: bool) -> StaffAction:
    """A rotation: a successor key for each, its secret shown once on the answer's page; the
    old key works for a grace period, or stops at once (`retire_now`: for a key that leaked)."""
    verb = "Rotate now" if retire_now else "Rotate"
    return StaffAction(
        name=name,
        label=label,
        model=ApiKey,
        service=api_key_rotate,
        arguments=lambda api_key, asked: {
            "api_key": api_key,
            "rotated_by": asked.user.get_username(),
            "retire_now": retire_now,
        },
        at_most=(
            MAX_KEYS_ROTATED_AT_ONCE,
            f"Rotate at most {MAX_KEYS_ROTATED_AT_ONCE} keys at a time: each new secret is "
            "shown once, and they must all fit on one page.",
        ),
        verb=verb,
        history=lambda outcome, asked: _rotated(outcome, verb, retire_now),
        record=_successor_logged,
        respond=_new_secrets,
        done="Rotated {n} API key(s).",
        already="Not rotated: {ids}.",
    )


rotate_keys = _rotate(
    "rotate_keys",
    "Rotate selected API keys (new key; the old one works for a grace period)",
    retire_now=False,
)
rotate_keys_now = _rotate(
    "rotate_keys_now",
    "Rotate selected API keys now (new key; the old one is revoked at once)",
    retire_now=True,
)


# --- The API key's forms (review move 6: the change form's writers are declared) -------------
@sensitive_variables("outcome")
def _issued(saving: Saving, outcome) -> None:
    adopt(saving.obj, outcome.value.api_key)
    # Kept on the request only, for the add form's answer (`response_add`) to show once.
    saving.request._tx_issued_keys = [outcome.value]


add_api_key = FormWrite(
    page="add form",
    model=ApiKey,
    service=api_key_create,
    arguments=lambda saving: {
        "institution": saving.data["institution"],
        "allow": saving.data["networks"],
        "role": saving.data["role"] or None,
        "scopes": saving.data["scopes"],
        "name": saving.data["name"],
        "expires_at": saving.data["expires_at"],
        "created_by": saving.request.user.get_username(),
    },
    then=_issued,
)


def _scopes_changed(saving: Saving, outcome) -> None:
    """Its own LogEntry, saying what was granted and taken away (the admin's own entry for this
    save covers the allowlist)."""
    api_key, before = outcome.value
    adopt(saving.obj, api_key)
    added = sorted(set(api_key.scopes) - set(before))
    removed = sorted(set(before) - set(api_key.scopes))
    if added or removed:
        saving.model_admin.log_change(
            saving.request,
            api_key,
            "Scopes changed: "
            + "; ".join(
                part
                for part in (
                    f"granted {', '.join(added)}" if added else "",
                    f"removed {', '.join(removed)}" if removed else "",
                )
                if part
            )
            + f" (now: {', '.join(api_key.scopes)}).",
        )


def _scopes_refused(saving: Saving, error: TXError) -> None:
    if not isinstance(error, ValidationFailed):
        raise error
    # E.g. revoked meanwhile: nothing changed, and the page says so.
    saving.obj.scopes = ApiKey.objects.get(pk=saving.obj.pk).scopes
    saving.model_admin.message_user(
        saving.request, f"Scopes not changed: {error.message}", messages.ERROR
    )


change_scopes = FormWrite(
    page="change form: the key's scopes (a revoked key's are final)",
    model=ApiKey,
    service=api_key_set_scopes,
    arguments=lambda saving: {"api_key": saving.obj, "scopes": saving.data["scopes"]},
    when=lambda saving: "scopes" in saving.form.changed_data,
    then=_scopes_changed,
    refused=_scopes_refused,
)


def _removed_meanwhile(saving: Saving, error: TXError) -> None:
    if not isinstance(error, NotFound):
        raise error
    # Removed meanwhile by someone else: the outcome is the one asked for.


allowlist_add_write = FormWrite(
    page="API key's change form: a network added to its allowlist",
    model=AllowedNetwork,
    service=allowlist_add,
    arguments=lambda saving, cidr: {"api_key": saving.obj, "cidr": cidr},
)
allowlist_remove_write = FormWrite(
    page="API key's change form: a network removed from its allowlist",
    model=AllowedNetwork,
    service=allowlist_remove,
    arguments=lambda saving, cidr: {"api_key": saving.obj, "cidr": cidr},
    refused=_removed_meanwhile,
)


def _save_allowlist(saving: Saving, formset) -> None:
    """The allowlist inline's rows: a removed or changed network through `allowlist_remove`, a
    new or changed one through `allowlist_add`, and what `formset.save()` would have recorded,
    for the admin's change message."""
    formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
    for inline_form in formset.initial_forms:
        old_cidr = inline_form.initial["cidr"]
        if formset._should_delete_form(inline_form):
            allowlist_remove_write.run(saving, cidr=old_cidr)
            formset.deleted_objects.append(inline_form.instance)
        elif inline_form.has_changed():
            new_cidr = inline_form.cleaned_data["cidr"]
            if new_cidr != old_cidr:
                allowlist_remove_write.run(saving, cidr=old_cidr)
                network = allowlist_add_write.run(saving, cidr=new_cidr).value
                formset.changed_objects.append((network, ["cidr"]))
    for inline_form in formset.extra_forms:
        if inline_form.has_changed() and not formset._should_delete_form(inline_form):
            network = allowlist_add_write.run(saving, cidr=inline_form.cleaned_data["cidr"]).value
            formset.new_objects.append(network)


allowlist = InlineWrite(
    model=AllowedNetwork,
    writes=(allowlist_add_write, allowlist_remove_write),
    save=_save_allowlist,
)
