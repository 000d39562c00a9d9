"""Postal addresses in request and response bodies. v2 names the country `countryCode`, v1
`countryId` (docs/design.md section 4, `api.names.V1_RENAMES`); both are ISO 3166-1 numeric codes of
three digits."""

from rest_framework import serializers

from api.names import v1_twin
from api.serializers import CountryNumericField, Serializer, StrictCharField, StrictSerializer


class AddressInput(StrictSerializer):
    line1 = StrictCharField(max_length=200)
    line2 = StrictCharField(max_length=200, required=False, allow_null=True, allow_blank=True)
    city = StrictCharField(max_length=100)
    postalCode = StrictCharField(source="postal_code", max_length=20)  # noqa: N815
    countryCode = CountryNumericField(source="country_code")  # noqa: N815

    def validate(self, attrs):
        # An address is always sent whole, in PATCH too (where DRF would skip missing fields).
        missing = [
            name
            for name, field in self.fields.items()
            if field.required is not False and name != "line2" and field.source not in attrs
        ]
        if missing:
            raise serializers.ValidationError({name: "This field is required." for name in missing})
        return attrs


class Address(Serializer):
    line1 = serializers.CharField()
    line2 = serializers.CharField(allow_null=True)
    city = serializers.CharField()
    postalCode = serializers.CharField(source="postal_code")  # noqa: N815
    countryCode = serializers.CharField(source="country_code")  # noqa: N815


# v1's twins: the same fields, renamed as `api.names.V1_RENAMES` says.
V1AddressInput = v1_twin(AddressInput, object_name="Address")
V1Address = v1_twin(Address, object_name="Address")
