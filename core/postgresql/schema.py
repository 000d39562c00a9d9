"""Migrations without `_like` indexes.

For every indexed `varchar` or `text` column (every foreign key to our string ids, every
primary key) Django's PostgreSQL backend adds a second index with `varchar_pattern_ops`, for
`LIKE 'x%'` queries outside the C locale. TX runs none: ids are opaque and compared whole, and
the admin's searches are exact or `icontains` (which such an index cannot serve). Each of those
indexes was written on every insert for nothing: the statement-line table carried seven.
`core/migrations/0001_no_like_indexes.py` dropped the ones made before this backend.
"""

from django.db.backends.postgresql import schema


class DatabaseSchemaEditor(schema.DatabaseSchemaEditor):
    def _create_like_index_sql(self, model, field):
        return None
