from .access import SensitiveDetailsAccess
from .cards import Card
from .products import CardProduct
from .usage import CardSpend

__all__ = ["Card", "CardProduct", "CardSpend", "SensitiveDetailsAccess"]
