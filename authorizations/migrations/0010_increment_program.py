# Incremental authorizations decided by the program (docs/decisioning.md, "Increments"): an
# increment's `approved` becomes a `decision` (approved, declined, awaiting_program) with the
# same record of the program's call as an authorization's. Existing increments keep their
# meaning: approved or declined by TX, decided when created.

import django.db.models.deletion
from django.db import migrations, models

DECISIONS = [('approved', 'Approved'), ('declined', 'Declined'), ('awaiting_program', 'Awaiting Program')]


class Migration(migrations.Migration):

    dependencies = [
        ('authorizations', '0009_staff_roles_view_increments'),
        ('decisioning', '0003_breaker'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='authorizationincrement',
            name='authorization_increment_decision_consistent',
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='decision',
            field=models.CharField(choices=DECISIONS, max_length=16, null=True),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='decided_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "UPDATE authorizations_authorizationincrement SET decided_at = created_at, "
            "decision = CASE WHEN approved THEN 'approved' ELSE 'declined' END",
            reverse_sql="UPDATE authorizations_authorizationincrement "
            "SET approved = (decision = 'approved')",
        ),
        migrations.AlterField(
            model_name='authorizationincrement',
            name='decision',
            field=models.CharField(choices=DECISIONS, max_length=16),
        ),
        migrations.RemoveField(
            model_name='authorizationincrement',
            name='approved',
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='decided_by',
            field=models.CharField(choices=[('tx', 'Tx'), ('program', 'Program'), ('standin', 'Standin'), ('network', 'Network')], db_default='tx', default='tx', max_length=16),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='decisioning_endpoint',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='decisioning.decisioningendpoint'),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='program_answer',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='program_error',
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='program_latency_ms',
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='program_mode',
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name='authorizationincrement',
            name='program_status',
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='authorizationincrement',
            index=models.Index(condition=models.Q(('decision', 'awaiting_program')), fields=['created_at'], name='increment_awaiting_idx'),
        ),
        migrations.AddConstraint(
            model_name='authorizationincrement',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('decision__in', ['approved', 'awaiting_program']), ('hold__isnull', False), ('decline_code', '')), models.Q(('decision', 'declined'), models.Q(('decline_code', ''), _negated=True)), _connector='OR'), name='authorization_increment_decision_consistent_v2'),
        ),
    ]
