"""What other apps can hear from this layer without it importing them."""

from django.dispatch import Signal

# Sent inside the transaction that creates an institution (`institution_create`), with
# `institution=`. A receiver that raises rolls the creation back.
institution_created = Signal()
