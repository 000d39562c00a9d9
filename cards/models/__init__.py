from .access import SensitiveDetailsAccess
from .cards import Card
from .products import CardProduct
from .usage import CardPayment, CardSpend

__all__ = ["Card", "CardPayment", "CardProduct", "CardSpend", "SensitiveDetailsAccess"]
