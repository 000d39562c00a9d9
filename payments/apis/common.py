"""What several of the payments endpoints take alike: the body of a cancellation (of a payment
order, a stop payment, a mandate)."""

from api.serializers import StrictCharField, StrictSerializer


class CancellationCreate(StrictSerializer):
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)
