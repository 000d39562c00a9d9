"""The audit page (docs/back-office.md, "The audit page"): every staff action and approval, as
the events naming the staff user record them (`backoffice.models.StaffActivity`), filterable by
user, institution, object and date, each linking to its object and the journal it posted
(`backoffice.audit`). Read-only; exported like every list."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import CharField, OuterRef, Subquery
from django.db.models.functions import Cast
from django.utils.html import format_html, format_html_join

from api.names import api_data
from backoffice.audit import journals_of, object_url
from backoffice.kit import ExactIdSearchMixin, ReadOnlyModelAdmin, admin_link, fields_display
from backoffice.models import StaffActivity
from events.types import OBJECT_TYPES


class StaffUserFilter(admin.SimpleListFilter):
    """The staff user who did it (the events' actor is the user's id)."""

    title = "staff user"
    parameter_name = "user"

    def lookups(self, request, model_admin):
        users = get_user_model().objects.filter(is_staff=True).order_by("username")
        return [(str(pk), username) for pk, username in users.values_list("pk", "username")]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(actor_id=self.value())
        return queryset


class ObjectTypeFilter(admin.SimpleListFilter):
    """What kind of row the action was on."""

    title = "object"
    parameter_name = "object_type"

    def lookups(self, request, model_admin):
        # The kinds events are about (`events.types`), not read from the events: no scan of
        # them for the filter.
        return [(kind, kind.replace("_", " ")) for kind in sorted(set(OBJECT_TYPES.values()))]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(object_type=self.value())
        return queryset


@admin.register(StaffActivity)
class StaffActivityAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "when",
        "staff_user",
        "type",
        "institution",
        "object_link",
        "journal_links",
    ]
    list_display_links = ["when"]
    list_filter = [StaffUserFilter, "institution", ObjectTypeFilter, "created_at"]
    list_select_related = ["institution"]
    search_fields = ["object_id", "id"]
    search_help_text = "An object's id (an account, a card, an approval request…), or an event's."
    date_hierarchy = "created_at"
    # The events are many (the API's too): the page is not counted whole.
    show_full_result_count = False
    fields = [
        "id",
        "when",
        "staff_user",
        "institution",
        "type",
        "object_link",
        "journal_links",
        "data_display",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        users = get_user_model().objects.annotate(key=Cast("pk", CharField()))
        username = users.filter(key=OuterRef("actor_id")).values("username")[:1]
        return super().get_queryset(request).annotate(username=Subquery(username))

    @admin.display(description="when", ordering="created_at")
    def when(self, obj):
        return obj.created_at

    @admin.display(description="staff user", ordering="username")
    def staff_user(self, obj):
        return obj.username

    @admin.display(description="object", ordering="object_id")
    def object_link(self, obj):
        url = object_url(obj)
        text = f"{obj.object_type.replace('_', ' ')} {obj.object_id}"
        return text if url is None else format_html('<a href="{}">{}</a>', url, text)

    @admin.display(description="journal")
    def journal_links(self, obj):
        journals = journals_of(obj)
        if not journals:
            return "—"
        return format_html_join(", ", "{}", ((admin_link(j, j.pk),) for j in journals))

    @admin.display(description="data")
    def data_display(self, obj):
        # As the event log shows it (`backoffice.admin.events`): the API's names, amounts with
        # their currency.
        return fields_display(api_data(obj.data, object_type=obj.object_type))
