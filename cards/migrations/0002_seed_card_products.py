"""Institutions created before card issuing get the standard card products."""

from django.db import migrations


def seed(apps, schema_editor):
    from cards.services.products import STANDARD_PRODUCTS

    Institution = apps.get_model("api", "Institution")
    CardProduct = apps.get_model("cards", "CardProduct")
    from core.ids import new_id

    for institution in Institution.objects.all():
        for fields in STANDARD_PRODUCTS:
            CardProduct.objects.get_or_create(
                institution=institution,
                code=fields["code"],
                defaults={
                    "id": new_id("cprd"),
                    **{key: value for key, value in fields.items() if key != "code"},
                },
            )


class Migration(migrations.Migration):
    dependencies = [("cards", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
