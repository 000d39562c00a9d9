"""Reads every app's selectors share."""

from django.db.models import Model, QuerySet

from core.exceptions import NotFound


def get_of_institution(
    rows: type[Model] | QuerySet, *, institution, missing: str, **lookup
) -> Model:
    """The one row of `rows` (a model, or a queryset with its `select_related`, `defer`,
    annotations...) that belongs to `institution` and matches `lookup` (`id=...`).

    Another institution's row answers exactly as an unknown one (docs/design.md section 3): 404
    `not_found` with the message `missing`, the one clients see ("No card with this id.").
    """
    queryset = rows._default_manager.all() if isinstance(rows, type) else rows
    try:
        # get(), not first(): the lookups name one row, so no ORDER BY to compile (first() adds
        # one: a quarter of the query's compilation, bench/README.md).
        return queryset.get(institution=institution, **lookup)
    except queryset.model.DoesNotExist:
        raise NotFound(missing) from None
