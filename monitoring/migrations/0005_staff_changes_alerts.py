"""The back office's watch on staff (docs/back-office.md, "Four eyes"): an alert about an
account changed several times by staff alone, with no rule and no card. The CHECK keeps each
kind of alert whole; every existing alert is a payment's (rule and card set, no account)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0033_hold_indexes_trimmed'),
        ('cards', '0012_plain_names'),
        ('monitoring', '0004_monitoring_alert_rule_idx'),
    ]

    operations = [
        migrations.AddField(
            model_name='monitoringalert',
            name='account',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='monitoring_alerts', to='accounts.account'),
        ),
        migrations.AlterField(
            model_name='monitoringalert',
            name='card',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='monitoring_alerts', to='cards.card'),
        ),
        migrations.AlterField(
            model_name='monitoringalert',
            name='rule',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='alerts', to='monitoring.monitoringrule'),
        ),
        migrations.AlterField(
            model_name='monitoringalert',
            name='subject_type',
            field=models.CharField(choices=[('authorization', 'Authorization'), ('transfer', 'Transfer'), ('staff_changes', 'staff changes made alone')], max_length=16),
        ),
        migrations.AddConstraint(
            model_name='monitoringalert',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('account__isnull', True), ('card__isnull', False), ('rule__isnull', False), ('subject_type__in', ['authorization', 'transfer'])), models.Q(('account__isnull', False), ('action', 'alert'), ('card__isnull', True), ('rule__isnull', True), ('subject_type', 'staff_changes')), _connector='OR'), name='monitoring_alert_subject'),
        ),
    ]
