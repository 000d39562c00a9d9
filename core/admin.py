"""The admin toolkit every app's back office is built with: links, confirmation pages, the
per-object action loop (`apply_each`), read-only bases, exact-id search, and who did it.

Rows that services write are changed in the admin only through actions that call those services
(DESIGN.md section 10); these bases make every other path read-only.
"""

import json

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import Q
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from core.exceptions import TXError
from core.money import money  # noqa: F401  (the admin's money column)


def adopt(obj, saved) -> None:
    """Make the admin's unsaved `obj` the row a service just saved (`saved`), in place.

    The admin keeps using the instance its form built (for the log entry and the redirect).
    """
    for field in type(saved)._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


def admin_link(obj, text=None):
    if obj is None:
        return "—"
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text or str(obj))


def changelist_link(model, text: str, **filters):
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    query = "&".join(f"{name}={value}" for name, value in filters.items())
    return format_html('<a href="{}?{}">{}</a>', url, query, text)


def pretty_json(value) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True))


def apply_each(model_admin, request, objects, change, *, done: str, already: str) -> None:
    """A changelist action's loop: `change(obj)` runs for each object in its own transaction
    and returns `(obj_after, log_message)` when it changed the object, None when the object
    already was so. A TXError refuses that object alone (reported, nothing of it changed);
    one LogEntry per changed object; then one message for the changed (`done`, with `{n}`)
    and one for the unchanged (`already`, with `{ids}`)."""
    changed, unchanged = 0, []
    for obj in objects:
        try:
            with transaction.atomic():
                result = change(obj)
                if result is None:
                    unchanged.append(obj.pk)
                    continue
                model_admin.log_change(request, *result)
        except TXError as exc:
            model_admin.message_user(request, f"{obj.pk}: {exc.message}", messages.ERROR)
            continue
        changed += 1
    if changed:
        model_admin.message_user(request, done.format(n=changed), messages.SUCCESS)
    if unchanged:
        model_admin.message_user(request, already.format(ids=", ".join(unchanged)), messages.INFO)


def confirmation_page(
    model_admin,
    request,
    *,
    template: str,
    title: str,
    form,
    action_name: str,
    confirm_name: str,
    objects: list,
    submit_label: str,
    **context,
) -> TemplateResponse:
    """The intermediate page of an action that asks for input before it changes anything
    (`admin/action_confirmation.html`, which `template` extends)."""
    return TemplateResponse(
        request,
        template,
        {
            **model_admin.admin_site.each_context(request),
            "title": title,
            "subtitle": None,
            "opts": model_admin.opts,
            "media": model_admin.media + form.media,
            "action_name": action_name,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "confirm_name": confirm_name,
            "objects": objects,
            "submit_label": submit_label,
            "form": form,
            **context,
        },
    )


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """Staff may look, nobody may add, change or delete (rows written only by services)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def actor_display(obj, prefix: str) -> str:
    """Who wrote a row stamped by `Actor.stamp(prefix)`: a staff user, an API key or the system."""
    user = getattr(obj, f"{prefix}_user")
    if user is not None:
        return f"staff {user.get_username()}"
    api_key = getattr(obj, f"{prefix}_api_key")
    if api_key is not None:
        return f"API key {api_key.prefix}"
    return "system"


def failure(admin_, request, obj_id: str, exc: TXError) -> None:
    admin_.message_user(request, f"{obj_id}: {exc.message}", messages.ERROR)


class ActionsOnlyModelAdmin(admin.ModelAdmin):
    """Rows written only by services: staff view them and change them only through actions.

    No add, no delete; the change page is view-only (no form can save the row, so a stale copy
    never overwrites what a service wrote under its locks). Change permission on the model is
    what the actions require (`permissions=["change"]`).
    """

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request)


class ExactIdSearchMixin:
    """Search by exact ids (`search_fields` are plain field names): each term is one index
    lookup. Django's `=field` search compares UPPER(...) and cannot use the indexes."""

    search_help_text = "An exact id."

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        condition = Q()
        for field in self.search_fields:
            condition |= Q(**{field: term})
        return queryset.filter(condition), False


class ReadOnlyInline(admin.TabularInline):
    """Shown on a parent's page, never edited there. `recent` (with `fk_name` set): show only
    the newest rows (the parent's admin uses `RecentInlinesMixin`)."""

    extra = 0
    can_delete = False
    show_change_link = True
    recent: int | None = None

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RecentInlinesMixin:
    """Limit each `ReadOnlyInline` with `recent` to its newest rows (by id), in one query."""

    def get_formset_kwargs(self, request, obj, inline, prefix):
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if getattr(inline, "recent", None) and obj is not None and obj.pk is not None:
            queryset = kwargs["queryset"]
            newest = queryset.filter(**{inline.fk_name: obj}).order_by("-pk").values("pk")
            # IN (SELECT ... LIMIT n): the formset filters by the parent again, harmlessly.
            kwargs["queryset"] = queryset.filter(pk__in=newest[: inline.recent])
        return kwargs
