"""`/products/cards`: the card products of the institution. Identical in both versions."""

from api.schema import both, document
from api.views import TXView

from ..selectors import card_product_list
from .serializers import CardProductOut


class CardProductListView(TXView):
    @document(
        name="CardProduct",
        resources=both(CardProductOut),
        many=True,
        summary="List card products",
        description="Debit cards sit on current accounts (`CBSFinancialContractTypeAPI`), "
        "prepaid cards on prepaid accounts (`AccountPrepaidAPI`, `GHSAccountPrepaidAPI`).",
        operation_id="card_products_list",
        tags=["Products"],
    )
    def get(self, request):
        return self.respond_list(card_product_list(institution=self.institution), CardProductOut)
