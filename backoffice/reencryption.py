"""Staff authenticator apps' keys under key rotation (`core.reencryption`; registered by
BackofficeConfig): each key is decrypted and sealed again under the newest field key, bound to
the same device. Nothing else of the device changes (its throttle, last code, confirmation)."""

from django.db.models import QuerySet

from backoffice.models import AppDevice
from core.reencryption import EncryptedRows, decrypting


def _stale(key_id: str) -> QuerySet:
    return AppDevice.objects.exclude(key_encrypted__startswith=f"{key_id}:")


def _reseal(device: AppDevice) -> None:
    device.seal(decrypting(device, device.key_hex))
    device.save(update_fields=["key_encrypted"])


STAFF_APP_KEYS = EncryptedRows(
    name="staff_app_keys",
    describe="{n} staff authenticator app key(s)",
    stale=_stale,
    reseal=_reseal,
)
