# What a presented authorization's returns credited back and its disputes contest, kept on its
# row so that PostgreSQL refuses more than was presented (docs/disputes.md, "What may be
# disputed"). The existing returns are counted in.

import django.db.models.expressions
import django.db.models.functions.comparison
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('authorizations', '0010_increment_program'),
    ]

    operations = [
        migrations.AddField(
            model_name='authorization',
            name='disputed_amount',
            field=models.BigIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name='authorization',
            name='returned_amount',
            field=models.BigIntegerField(db_default=0, default=0),
        ),
        migrations.RunSQL(
            """
            UPDATE authorizations_authorization a
               SET returned_amount = r.total
              FROM (SELECT authorization_id, sum(amount) AS total
                      FROM authorizations_cardreturn
                     WHERE authorization_id IS NOT NULL
                     GROUP BY authorization_id) r
             WHERE a.id = r.authorization_id
            """,
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name='authorization',
            constraint=models.CheckConstraint(condition=models.Q(('disputed_amount__gte', 0), ('returned_amount__gte', 0), ('returned_amount__lte', django.db.models.expressions.CombinedExpression(django.db.models.functions.comparison.Coalesce(models.F('presented_amount'), 0), '-', models.F('disputed_amount')))), name='authorization_returned_and_disputed_at_most_presented'),
        ),
    ]
