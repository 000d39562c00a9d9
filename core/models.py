"""Abstract models the apps' models share; core has no tables of its own.

Related models are named by string, so core imports nothing above it.
"""

from django.conf import settings
from django.db import models


def actor_stamped(prefix: str) -> type[models.Model]:
    """An abstract model with the two columns that `core.actors.Actor.stamp(prefix)` writes and
    `backoffice.kit.actor_display(obj, prefix)` reads: `<prefix>_api_key` and `<prefix>_user`, at
    most one of them set (both null: the system). `class Hold(actor_stamped("placed_by"))`."""
    name = prefix.title().replace("_", "")  # "placed_by" -> "PlacedBy"
    return type(
        name,
        (models.Model,),
        {
            "__module__": __name__,
            "__qualname__": name,
            "Meta": type("Meta", (), {"abstract": True}),
            f"{prefix}_api_key": _actor_field("institutions.ApiKey"),
            f"{prefix}_user": _actor_field(settings.AUTH_USER_MODEL),
        },
    )


def _actor_field(to: str, **options) -> models.ForeignKey:
    """One of an actor's two columns: nullable, protected, no reverse accessor."""
    return models.ForeignKey(
        to, on_delete=models.PROTECT, null=True, blank=True, related_name="+", **options
    )


# Who created the row (adjustments, transfers and their reversals, authorizations, returns).
CreatedBy = actor_stamped("created_by")


def staff_user_unindexed() -> models.ForeignKey:
    """An `actor_stamped` model's staff user (`<prefix>_user`) without the full index Django
    gives a foreign key: where the API or the card network makes nearly every row, with no user,
    a full index takes an entry for each of them. The model indexes the rows that have a user
    instead (`staff_user_index`), which serves every lookup by a user (an equality implies the
    column is not null)."""
    return _actor_field(settings.AUTH_USER_MODEL, db_index=False)


def api_key_unindexed() -> models.ForeignKey:
    """An `actor_stamped` model's API key (`<prefix>_api_key`) without the index Django gives a
    foreign key, for a table the API writes on every money movement (transfers). No read looks
    rows up by their key (the events' actor index serves "what did this key do"), and a key is
    never deleted (the admin forbids it, no service does it: keys are revoked), so the index
    served only the foreign key's check of a deletion that does not happen, and took an entry
    for every row."""
    return _actor_field("institutions.ApiKey", db_index=False)


def staff_user_index(prefix: str, name: str) -> models.Index:
    """The partial index of `staff_user_unindexed`'s column: `WHERE <prefix>_user_id IS NOT
    NULL`."""
    field = f"{prefix}_user"
    return models.Index(
        fields=[field], condition=models.Q(**{f"{field}__isnull": False}), name=name
    )


class Timestamped(models.Model):
    """A model whose `created_at` and `updated_at` both default to now: a new row's two are one
    instant (two calls of `timezone.now()` can fall in two milliseconds, and a new resource's
    `updatedAt` must be its `createdAt`). The fields stay the model's own; this only makes the
    second default the first's value when neither was given (rows read from the database, whose
    values come positionally, are left as stored)."""

    class Meta:
        abstract = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not args:
            self.made_at_one_instant(kwargs)

    def made_at_one_instant(self, given) -> None:
        """A new row built from the keywords `given` (`core.rows.new_row` builds one too)."""
        if "created_at" not in given and "updated_at" not in given:
            self.updated_at = self.created_at
