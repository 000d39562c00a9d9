"""Account products the bank defines (issue 14): a product is its rid, not its code (the code
is no longer unique per institution), with a status (`active` | `retired`), an overdraft cap
(`max_overdraft_limit`, 0 unless the product allows overdraft) and `updated_at`
(docs/products.md)."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("accounts", "0012_posting_refusals")]

    operations = [
        migrations.RemoveConstraint(
            model_name="accountproduct", name="account_product_code_unique"
        ),
        migrations.AlterModelOptions(name="accountproduct", options={"ordering": ["code", "id"]}),
        migrations.AddField(
            model_name="accountproduct",
            name="max_overdraft_limit",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="accountproduct",
            name="status",
            field=models.CharField(
                choices=[("active", "Active"), ("retired", "Retired")],
                default="active",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="accountproduct",
            name="updated_at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        # An existing product was last changed when it was made.
        migrations.RunSQL(
            "UPDATE accounts_accountproduct SET updated_at = created_at",
            migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name="accountproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(max_overdraft_limit__gte=0),
                name="account_product_max_overdraft_nonneg",
            ),
        ),
        migrations.AddConstraint(
            model_name="accountproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(allows_overdraft=True) | models.Q(max_overdraft_limit=0),
                name="account_product_overdraft_cap_needs_overdraft",
            ),
        ),
        migrations.AddConstraint(
            model_name="accountproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(status__in=["active", "retired"]),
                name="account_product_status_valid",
            ),
        ),
    ]
