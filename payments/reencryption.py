"""Payments' sealed numbers under key rotation (`core.reencryption`; registered by
PaymentsConfig): external accounts' ACH account numbers and IBANs, and the account numbers
inbound entries named. Only the ciphertext moves: the last four and `updated_at` stay."""

from django.db.models import Q, QuerySet

from core.reencryption import EncryptedRows, decrypting

from .models import ExternalAccount, InboundEntry


def _external_stale(key_id: str) -> QuerySet:
    prefix = f"{key_id}:"
    return ExternalAccount.objects.filter(
        (~Q(ach_account_number_encrypted="") & ~Q(ach_account_number_encrypted__startswith=prefix))
        | (~Q(sepa_iban_encrypted="") & ~Q(sepa_iban_encrypted__startswith=prefix))
    )


def _external_reseal(external: ExternalAccount) -> None:
    fields = []
    if external.ach_account_number_encrypted:
        number = decrypting(external, external.ach_account_number)
        external.ach_account_number_encrypted = external.sealed_account_number(number)[
            "ach_account_number_encrypted"
        ]
        fields.append("ach_account_number_encrypted")
    if external.sepa_iban_encrypted:
        iban = decrypting(external, external.sepa_iban)
        external.sepa_iban_encrypted = external.sealed_iban(iban)["sepa_iban_encrypted"]
        fields.append("sepa_iban_encrypted")
    external.save(update_fields=fields)


def _inbound_stale(key_id: str) -> QuerySet:
    return InboundEntry.objects.exclude(account_number_encrypted__startswith=f"{key_id}:")


def _inbound_reseal(inbound: InboundEntry) -> None:
    number = decrypting(inbound, inbound.account_number)
    inbound.account_number_encrypted = inbound.sealed_account_number(number)[
        "account_number_encrypted"
    ]
    inbound.save(update_fields=["account_number_encrypted"])


EXTERNAL_ACCOUNTS = EncryptedRows(
    name="external_accounts",
    describe="{n} external account number(s) or IBAN(s)",
    stale=_external_stale,
    reseal=_external_reseal,
)
INBOUND_ENTRIES = EncryptedRows(
    name="inbound_entries",
    describe="{n} inbound entry account number(s)",
    stale=_inbound_stale,
    reseal=_inbound_reseal,
)
