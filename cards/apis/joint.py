"""Joint accounts: v2 `POST /joint-accounts`, v1 `POST /cards/joint-account` (spec 2.3 with the
v1.1.3 rules: `primaryCard` and `secondaryCard` both required, each with `cardProductRid`;
`accountTypeRid` optional; account-only and single-card requests are 400). One account, two
holders, one card each, in one transaction; the answer has the account and both cards."""

from rest_framework import serializers

from accounts.apis.accounts import AccountOut, AccountOutV2
from accounts.selectors import account_product_get
from api.addresses import AddressInput, V1AddressInput
from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictSerializer
from api.views import TXView
from core.actors import Actor
from customers.selectors import customer_get
from institutions import scopes

from ..models import CardProduct
from ..selectors import card_product_get
from ..services import CardRequest, joint_account_open
from .serializers import CardOut, EmbossedNameField, V1CardOut


class JointCard(StrictSerializer):
    customerId = StrictCharField(max_length=40)  # noqa: N815
    cardProductRid = StrictCharField(max_length=40)  # noqa: N815
    form = serializers.ChoiceField(
        choices=CardProduct.Form.choices,
        required=False,
        help_text="Default: virtual when the product allows it, else physical.",
    )
    embossedName = EmbossedNameField(required=False)  # noqa: N815
    deliveryAddress = AddressInput(required=False, help_text="Physical cards only.")  # noqa: N815


class V1JointCard(JointCard):
    deliveryAddress = V1AddressInput(required=False, help_text="Physical cards only.")  # noqa: N815


class JointAccountCreate(StrictSerializer):
    accountTypeRid = StrictCharField(  # noqa: N815
        required=False,
        max_length=40,
        help_text="An account product (`/products/accounts`); default: a current account for "
        "debit cards, a prepaid account for prepaid cards.",
    )
    primaryCard = JointCard(help_text="The primary holder's card.")  # noqa: N815
    secondaryCard = JointCard(help_text="The secondary holder's card.")  # noqa: N815


class V1JointAccountCreate(JointAccountCreate):
    primaryCard = V1JointCard(help_text="The primary holder's card.")  # noqa: N815
    secondaryCard = V1JointCard(help_text="The secondary holder's card.")  # noqa: N815


class JointAccountOut(Serializer):
    account = AccountOutV2()
    primaryCard = CardOut()  # noqa: N815
    secondaryCard = CardOut()  # noqa: N815


class V1JointAccountOut(JointAccountOut):
    account = AccountOut()
    primaryCard = V1CardOut()  # noqa: N815
    secondaryCard = V1CardOut()  # noqa: N815


class JointAccountView(TXView):
    """Mounted at `/joint-accounts` in v2 and `/cards/joint-account` in v1."""

    write_scope = scopes.CARDS_WRITE

    @document(
        name="JointAccount",
        resources={"v1": V1JointAccountOut, "v2": JointAccountOut},
        request={"v1": V1JointAccountCreate, "v2": JointAccountCreate},
        created=True,
        summary="Open a joint account with a card for each holder",
        description="Both cards are required (400 `validation_error` for account-only or "
        "single-card requests); the two customers must differ and each card product must fit "
        "the account type.",
        operation_id="joint_accounts_create",
        tags=["Accounts"],
    )
    def post(self, request):
        data = self.parse(self.for_version({"v1": V1JointAccountCreate, "v2": JointAccountCreate}))
        account_product = None
        if "accountTypeRid" in data:
            account_product = account_product_get(
                institution=self.institution, product_id=data["accountTypeRid"]
            )
        account, primary, secondary = joint_account_open(
            institution=self.institution,
            primary=self._card_request(data["primaryCard"]),
            secondary=self._card_request(data["secondaryCard"]),
            account_product=account_product,
            actor=Actor.of_request(request),
        )
        output = self.for_version({"v1": V1JointAccountOut, "v2": JointAccountOut})
        return self.created(
            output({"account": account, "primaryCard": primary, "secondaryCard": secondary}).data
        )

    def _card_request(self, data: dict) -> CardRequest:
        product = card_product_get(institution=self.institution, product_id=data["cardProductRid"])
        form = data.get("form") or (
            CardProduct.Form.VIRTUAL
            if CardProduct.Form.VIRTUAL in product.forms
            else CardProduct.Form.PHYSICAL
        )
        return CardRequest(
            customer=customer_get(institution=self.institution, customer_id=data["customerId"]),
            product=product,
            form=form,
            embossed_name=data.get("embossedName"),
            delivery_address=data.get("deliveryAddress"),
        )
