"""`GET /products/accounts`: the institution's account types, identical in both versions."""

from rest_framework import serializers

from api.schema import document
from api.serializers import TimestampField
from api.views import TXView

from ..selectors import account_product_list


class AccountProductSerializer(serializers.Serializer):
    rid = serializers.CharField(source="id", help_text="Identifier of the product (productRid).")
    code = serializers.ChoiceField(
        choices=["AccountPrepaidAPI", "CBSFinancialContractTypeAPI", "GHSAccountPrepaidAPI"],
        help_text="Financial contract type.",
    )
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["prepaid", "current"])
    currency = serializers.CharField(help_text="ISO 4217 alpha-3.")
    allowsOverdraft = serializers.BooleanField(source="allows_overdraft")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class AccountProductListView(TXView):
    @document(
        name="AccountProduct",
        resources={"v1": AccountProductSerializer, "v2": AccountProductSerializer},
        many=True,
        summary="List the account types (financial contract types) of the institution",
        operation_id="account_products_list",
        tags=["Products"],
    )
    def get(self, request):
        return self.respond_list(
            account_product_list(institution=self.institution),
            AccountProductSerializer,
        )
