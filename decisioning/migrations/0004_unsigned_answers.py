"""Signed answers (issue 47 item 1): whether an endpoint takes an unsigned answer, off for
every endpoint there is (`db_default`: an existing program that does not sign yet fails into
its `on_failure` until it signs or the bank turns this on)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisioning", "0003_breaker"),
    ]

    operations = [
        migrations.AddField(
            model_name="decisioningendpoint",
            name="accept_unsigned_answers",
            field=models.BooleanField(db_default=False, default=False),
        ),
    ]
