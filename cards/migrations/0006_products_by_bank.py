"""Card products the bank defines (issue 14): a status (`active` | `retired`), validity in
months (`validity_months = validity_years * 12` for the existing products), default security
settings for new cards, a BIN unique among the institution's card products, and `updated_at`
(docs/products.md)."""

import django.contrib.postgres.fields
import django.utils.timezone
from django.db import migrations, models


def _array(max_length):
    return django.contrib.postgres.fields.ArrayField(
        base_field=models.CharField(max_length=max_length), blank=True, default=list, size=None
    )


class Migration(migrations.Migration):
    dependencies = [("cards", "0005_alter_card_institution_alter_cardproduct_institution_and_more")]

    operations = [
        # Validity: years -> months, the data carried over.
        migrations.AddField(
            model_name="cardproduct",
            name="validity_months",
            field=models.PositiveSmallIntegerField(default=36),
        ),
        migrations.RunSQL(
            "UPDATE cards_cardproduct SET validity_months = validity_years * 12",
            # Back: whole years, at least one (the old CHECK allowed 1 to 10).
            "UPDATE cards_cardproduct SET validity_years = "
            "LEAST(GREATEST(validity_months / 12, 1), 10)",
        ),
        migrations.RemoveConstraint(model_name="cardproduct", name="card_product_validity_years"),
        migrations.RemoveField(model_name="cardproduct", name="validity_years"),
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(validity_months__gte=1, validity_months__lte=120),
                name="card_product_validity_months",
            ),
        ),
        # Status.
        migrations.AddField(
            model_name="cardproduct",
            name="status",
            field=models.CharField(
                choices=[("active", "Active"), ("retired", "Retired")],
                default="active",
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(status__in=["active", "retired"]),
                name="card_product_status_valid",
            ),
        ),
        # Default security settings of new cards (the cards' own defaults).
        migrations.AddField(
            model_name="cardproduct",
            name="default_ecommerce",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="default_contactless",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="default_atm",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="default_international",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="default_magstripe",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(model_name="cardproduct", name="default_blocked_mccs", field=_array(4)),
        migrations.AddField(
            model_name="cardproduct", name="default_blocked_countries", field=_array(3)
        ),
        # updated_at: an existing product was last changed when it was made.
        migrations.AddField(
            model_name="cardproduct",
            name="updated_at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        migrations.RunSQL(
            "UPDATE cards_cardproduct SET updated_at = created_at", migrations.RunSQL.noop
        ),
        # What the service checks, the database holds.
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.UniqueConstraint(
                fields=["institution", "bin"], name="card_product_bin_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    default_per_transaction__gte=0,
                    default_daily__gte=0,
                    default_monthly__gte=0,
                    default_daily_cash__gte=0,
                ),
                name="card_product_default_limits_nonneg",
            ),
        ),
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(forms__len__gte=1), name="card_product_has_a_form"
            ),
        ),
    ]
