"""`/customers`: create, retrieve, update, list. v1 and v2 differ only in the address's country
field (`countryId` in v1, `countryCode` in v2) and in the envelope (`api.versions`)."""

from django.core.validators import RegexValidator
from rest_framework import serializers

from api.addresses import Address, AddressInput, V1Address, V1AddressInput
from api.schema import document
from api.serializers import (
    CountryNumericField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictCharField,
    StrictDateField,
    StrictEmailField,
    StrictSerializer,
    TimestampField,
)
from api.views import TXView
from institutions import scopes

from .selectors import customer_get, customer_list
from .services import (
    NATIONAL_ID_INVALID,
    NATIONAL_ID_RE,
    PHONE_INVALID,
    PHONE_RE,
    customer_create,
    customer_field_error,
    customer_update,
)

CREATED_MESSAGE = "Customer created."


# --- input
# The body's shape and types. The customer rules are the service's (`customers.services`): they
# are applied here too, field by field, so that one 400 lists every problem of a body (with the
# shape's) and the schema shows the patterns. (No docstring: it would become the schema's.)
class CustomerCreate(StrictSerializer):
    firstName = StrictCharField(source="first_name", max_length=100)  # noqa: N815
    lastName = StrictCharField(source="last_name", max_length=100)  # noqa: N815
    countryId = CountryNumericField(  # noqa: N815
        source="country_code", help_text='ISO 3166-1 numeric country code, e.g. "276".'
    )
    email = StrictEmailField(required=False, allow_null=True, max_length=254)
    phone = StrictCharField(
        required=False,
        allow_null=True,
        help_text="E.164, e.g. +4915112345678.",
        validators=[RegexValidator(PHONE_RE, PHONE_INVALID)],
    )
    dateOfBirth = StrictDateField(  # noqa: N815
        source="date_of_birth", required=False, allow_null=True
    )
    nationalId = StrictCharField(  # noqa: N815
        source="national_id",
        required=False,
        allow_null=True,
        write_only=True,
        help_text="Encrypted at rest; only its last four characters are ever returned.",
        validators=[RegexValidator(NATIONAL_ID_RE, NATIONAL_ID_INVALID)],
    )
    address = AddressInput(required=False, allow_null=True)
    metadata = MetadataField(required=False)

    def validate_dateOfBirth(self, value):  # noqa: N802
        message = customer_field_error("date_of_birth", value)
        if message is not None:
            raise serializers.ValidationError(message)
        return value


class V1CustomerCreate(CustomerCreate):
    address = V1AddressInput(required=False, allow_null=True)
    metadata = None  # v2 only (docs/metadata.md)


class CustomerUpdate(CustomerCreate):
    """Every field optional; `null` clears an optional field; `address` is replaced whole;
    `metadata` is merged."""

    metadata = MetadataPatchField(required=False)


class V1CustomerUpdate(V1CustomerCreate):
    pass


# --- output
class Customer(Serializer):
    customerId = serializers.CharField(source="id")  # noqa: N815
    firstName = serializers.CharField(source="first_name")  # noqa: N815
    lastName = serializers.CharField(source="last_name")  # noqa: N815
    countryId = serializers.CharField(source="country_code")  # noqa: N815
    email = serializers.EmailField(allow_null=True)
    phone = serializers.CharField(allow_null=True)
    dateOfBirth = serializers.DateField(source="date_of_birth", allow_null=True)  # noqa: N815
    nationalIdLast4 = serializers.CharField(  # noqa: N815
        source="national_id_last4",
        allow_null=True,
        help_text="Last four characters of the national id; the full value is never returned. "
        "null when there is no national id, or when it has fewer than 8 letters and digits "
        "(its last four would be most of it).",
    )
    address = Address(allow_null=True)
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class V1Customer(Customer):
    address = V1Address(allow_null=True)
    metadata = None  # v2 only (docs/metadata.md)


class CustomerCreated(Customer):
    message = serializers.CharField(help_text="Human-readable confirmation.")


class V1CustomerCreated(V1Customer):
    message = serializers.CharField(help_text="Human-readable confirmation.")


OUTPUT = {"v1": V1Customer, "v2": Customer}
CREATED = {"v1": V1CustomerCreated, "v2": CustomerCreated}
CREATE_INPUT = {"v1": V1CustomerCreate, "v2": CustomerCreate}
UPDATE_INPUT = {"v1": V1CustomerUpdate, "v2": CustomerUpdate}


class CustomerListView(TXView):
    write_scope = scopes.CUSTOMERS_WRITE

    @document(
        name="CustomerCreated",
        resources=CREATED,
        request=CREATE_INPUT,
        created=True,
        summary="Create a customer",
        description="201 (v2) or 200 (v1) with `customerId`, the customer and `message`.",
        operation_id="customers_create",
        tags=["Customers"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        customer = customer_create(institution=self.institution, **data)
        body = dict(self.for_version(OUTPUT)(customer).data, message=CREATED_MESSAGE)
        return self.created(body)

    @document(
        name="Customer",
        resources=OUTPUT,
        many=True,
        summary="List customers, newest first",
        operation_id="customers_list",
        tags=["Customers"],
    )
    def get(self, request):
        return self.respond_list(
            customer_list(institution=self.institution), self.for_version(OUTPUT)
        )


class CustomerDetailView(TXView):
    write_scope = scopes.CUSTOMERS_WRITE

    @document(
        name="Customer",
        resources=OUTPUT,
        summary="Retrieve a customer",
        operation_id="customers_retrieve",
        tags=["Customers"],
    )
    def get(self, request, customerId):  # noqa: N803 (path parameters are camelCase)
        customer = customer_get(institution=self.institution, customer_id=customerId)
        return self.respond(self.for_version(OUTPUT)(customer).data)

    @document(
        name="Customer",
        resources=OUTPUT,
        request=UPDATE_INPUT,
        summary="Update a customer",
        description=(
            "Send only the fields to change; `null` clears an optional field; `address` is "
            "replaced as a whole; `metadata` (v2) is merged, a key set to null is removed. v1 "
            "also accepts POST to this path."
        ),
        operation_id="customers_update",
        tags=["Customers"],
    )
    def patch(self, request, customerId):  # noqa: N803
        customer = customer_get(institution=self.institution, customer_id=customerId)
        changes = self.parse(self.for_version(UPDATE_INPUT), partial=True)
        customer = customer_update(customer=customer, changes=changes)
        return self.respond(self.for_version(OUTPUT)(customer).data)
