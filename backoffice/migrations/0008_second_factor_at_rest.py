"""What django-otp's own devices held, moved into the back office's (0007) and made unreadable
at rest (docs/back-office.md, "Signing in"; issue 46, H3):

- each user's confirmed authenticator app (`otp_totp_totpdevice`, the key in hex): its key
  encrypted with the field keys, bound to the new row; its drift, last code's step and throttle
  kept, so the next code works as before;
- each user's recovery codes (`otp_static_statictoken`, as typed): each stored as a salted
  keyed hash (`STAFF_RECOVERY_CODE_KEY`), so the codes the user kept still sign in once;
- unconfirmed apps (an enrolment begun with the password alone, whose key any session saw) are
  not moved: their users enrol again, with an enrolment token.

Then the old rows are deleted: no key and no code stays in clear. The old tables stay, empty
(their apps are no longer installed, so nothing reads them; the release before this one still
starts on them). A database made after this release never had them: nothing to do. Sessions
verified by an old device are not verified any more (its id names an app that is gone): staff
sign in again with their code.

Backwards, the authenticator apps go back to `otp_totp_totpdevice` (the release before reads
keys in clear, so they are decrypted) and the recovery codes are lost: a hash does not give the
code back (users make new ones). Only where the old table exists.
"""

from django.db import migrations

from backoffice.models import app_key_context
from backoffice.secrets import recovery_code_hash
from core import crypto

OLD_APPS = "otp_totp_totpdevice"
OLD_CODE_DEVICES = "otp_static_staticdevice"
OLD_CODES = "otp_static_statictoken"
# The only TOTP parameters this project ever made devices with (django-otp's defaults), and the
# only ones the new devices know.
STANDARD = (30, 0, 6, 1)  # step, t0, digits, tolerance
DEVICE_COLUMNS = (
    "name, throttling_failure_timestamp, throttling_failure_count, created_at, last_used_at"
)


def _rows(cursor, sql: str) -> list[dict]:
    cursor.execute(sql)
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _next_id(cursor, table: str) -> int:
    cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [table])
    return cursor.fetchone()[0]


def _device_fields(row: dict) -> dict:
    return {
        "user_id": row["user_id"],
        "name": row["name"],
        "confirmed": True,
        "throttling_failure_timestamp": row["throttling_failure_timestamp"],
        "throttling_failure_count": row["throttling_failure_count"],
        "last_used_at": row["last_used_at"],
    }


def forward(apps, schema_editor):
    connection = schema_editor.connection
    tables = set(connection.introspection.table_names())
    if OLD_APPS not in tables and OLD_CODE_DEVICES not in tables:
        return
    AppDevice = apps.get_model("backoffice", "AppDevice")
    RecoveryCodeDevice = apps.get_model("backoffice", "RecoveryCodeDevice")
    RecoveryCode = apps.get_model("backoffice", "RecoveryCode")
    with connection.cursor() as cursor:
        if OLD_APPS in tables:
            seen = set()
            for row in _rows(
                cursor,
                f"SELECT id, user_id, key, step, t0, digits, tolerance, drift, last_t, "  # noqa: S608
                f"{DEVICE_COLUMNS} FROM {OLD_APPS} WHERE confirmed ORDER BY id",
            ):
                # Sign-in checked a user's first confirmed app only: the same one moves.
                if row["user_id"] in seen:
                    continue
                seen.add(row["user_id"])
                parameters = (row["step"], row["t0"], row["digits"], row["tolerance"])
                if parameters != STANDARD:
                    raise RuntimeError(
                        f"TOTP device {row['id']} has step/t0/digits/tolerance {parameters}, not "
                        f"{STANDARD}: move it by hand or reset its user's second factor first."
                    )
                device_id = _next_id(cursor, AppDevice._meta.db_table)
                AppDevice.objects.create(
                    id=device_id,
                    key_encrypted=crypto.encrypt(
                        row["key"].lower(), context=app_key_context(device_id)
                    ),
                    drift=row["drift"],
                    last_t=row["last_t"],
                    **_device_fields(row),
                )
                # auto_now_add wrote the migration's time: keep when the app was enrolled.
                AppDevice.objects.filter(pk=device_id).update(created_at=row["created_at"])
            cursor.execute(f"DELETE FROM {OLD_APPS}")  # noqa: S608
        if OLD_CODE_DEVICES in tables:
            seen = set()
            for row in _rows(
                cursor,
                f"SELECT id, user_id, {DEVICE_COLUMNS} FROM {OLD_CODE_DEVICES} "  # noqa: S608
                "WHERE confirmed ORDER BY id",
            ):
                if row["user_id"] in seen:
                    continue
                seen.add(row["user_id"])
                device = RecoveryCodeDevice.objects.create(**_device_fields(row))
                RecoveryCodeDevice.objects.filter(pk=device.pk).update(created_at=row["created_at"])
                cursor.execute(f"SELECT token FROM {OLD_CODES} WHERE device_id = %s", [row["id"]])  # noqa: S608
                codes = []
                for (code,) in cursor.fetchall():
                    salt, digest = recovery_code_hash(code)
                    codes.append(RecoveryCode(device=device, salt=salt, digest=digest))
                RecoveryCode.objects.bulk_create(codes)
            cursor.execute(f"DELETE FROM {OLD_CODES}")  # noqa: S608
            cursor.execute(f"DELETE FROM {OLD_CODE_DEVICES}")  # noqa: S608


def backward(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_APPS not in set(connection.introspection.table_names()):
        return
    AppDevice = apps.get_model("backoffice", "AppDevice")
    with connection.cursor() as cursor:
        for device in AppDevice.objects.filter(confirmed=True).order_by("pk"):
            key = crypto.decrypt(device.key_encrypted, context=app_key_context(device.pk))
            cursor.execute(
                f"INSERT INTO {OLD_APPS} (user_id, confirmed, key, step, t0, digits, "  # noqa: S608
                f"tolerance, drift, last_t, {DEVICE_COLUMNS}) "
                "VALUES (%s, true, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    device.user_id,
                    key,
                    *STANDARD,
                    device.drift,
                    device.last_t,
                    device.name,
                    device.throttling_failure_timestamp,
                    device.throttling_failure_count,
                    device.created_at,
                    device.last_used_at,
                ],
            )
    AppDevice.objects.all().delete()
    apps.get_model("backoffice", "RecoveryCodeDevice").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("backoffice", "0007_second_factor_devices")]

    operations = [migrations.RunPython(forward, backward)]
