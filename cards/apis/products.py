"""`/products/cards`: the card products of the institution. Listed the same in both versions;
made (`POST`), read one by one and changed (`PATCH`, also to retire) in v2 only: v1, the legacy
line, lists (docs/products.md)."""

from api.schema import both, document
from api.versions import V2
from api.views import TXView
from institutions import scopes

from ..selectors import card_product_get, card_product_list
from ..services import card_product_create, card_product_update
from .serializers import CardProductCreate, CardProductOut, CardProductUpdate

# Fees are money taken from cardholders' accounts, like an unload: they need `money:adjust`
# (docs/products.md); 0, no fee, does not.
FEE_FIELDS = scopes.BodyScope(
    scopes.MONEY_ADJUST,
    "an `atmFee`, `replacementFee` or `foreignTransactionFeeBps` above 0",
    scopes.above_zero("atm_fee", "replacement_fee", "foreign_transaction_fee_bps"),
)


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


class CardProductListCreateView(CardProductListView):
    """v2: the list, and `POST` to make a product."""

    write_scope = scopes.PRODUCTS_WRITE
    body_scopes = (FEE_FIELDS,)

    @document(
        name="CardProduct",
        resources={V2: CardProductOut},
        request={V2: CardProductCreate},
        created=True,
        summary="Create a card product",
        description="Its defaults (limits, security settings, validity) are copied onto each "
        "card issued on it. Emits `product.created`.",
        operation_id="card_products_create",
        tags=["Products"],
    )
    def post(self, request):
        data = self.parse(CardProductCreate)
        scopes.require_body_scopes(request, self.body_scopes, data)
        product = card_product_create(institution=self.institution, **data)
        return self.created(CardProductOut(product).data)


class CardProductDetailView(TXView):
    """v2: one product, and `PATCH` to change or retire it."""

    write_scope = scopes.PRODUCTS_WRITE
    body_scopes = (FEE_FIELDS,)

    @document(
        name="CardProduct",
        resources={V2: CardProductOut},
        summary="Retrieve a card product",
        operation_id="card_products_retrieve",
        tags=["Products"],
    )
    def get(self, request, cardProductRid):  # noqa: N803 (path parameters are camelCase)
        product = card_product_get(institution=self.institution, product_id=cardProductRid)
        return self.respond(CardProductOut(product).data)

    @document(
        name="CardProduct",
        resources={V2: CardProductOut},
        request={V2: CardProductUpdate},
        summary="Change or retire a card product",
        description="Send only what changes (inside `defaultLimits` and "
        "`defaultSecuritySettings` too). New values apply to cards issued afterwards; a card "
        "keeps what it was issued with. `code`, `kind`, `bin` and `panLength` never change "
        "(400). Emits `product.updated` (nothing when nothing changes).",
        operation_id="card_products_update",
        tags=["Products"],
    )
    def patch(self, request, cardProductRid):  # noqa: N803
        product = card_product_get(institution=self.institution, product_id=cardProductRid)
        changes = self.parse(CardProductUpdate, partial=True)
        scopes.require_body_scopes(request, self.body_scopes, changes)
        product = card_product_update(product=product, changes=dict(changes)).value
        return self.respond(CardProductOut(product).data)
