from api.models import Institution

from .models import AccountProduct


def account_product_list(*, institution: Institution):
    return AccountProduct.objects.filter(institution=institution)
