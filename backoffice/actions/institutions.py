"""What staff do to API keys: revoke and rotate them (docs/tenancy-and-keys.md).

Each leaves a `LogEntry` naming the action and the public key id or prefix, never a secret. A
new secret (a key rotated here, or added by the key's form) is shown once, on a page of its own
answering the POST that made it (`secrets_page`, `Cache-Control: no-store`); it never goes into
the messages framework, its cookie or the session, nor into any table.
"""

from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.debug import sensitive_variables

from backoffice.actions.base import StaffAction
from institutions.models import ApiKey
from institutions.services import IssuedKey, api_key_revoke, api_key_rotate

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
