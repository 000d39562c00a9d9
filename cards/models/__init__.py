from .access import SensitiveDetailsAccess
from .cards import Card
from .products import CardProduct
from .security import PanResolutionFailure, PinUnblock
from .usage import CardPayment, CardSpend

__all__ = [
    "Card",
    "CardPayment",
    "CardProduct",
    "CardSpend",
    "PanResolutionFailure",
    "PinUnblock",
    "SensitiveDetailsAccess",
]
