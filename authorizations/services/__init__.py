from .authorize import authorization_create
from .clearing import authorization_present, authorization_reverse, authorizations_expire
from .returns import card_return_create

__all__ = [
    "authorization_create",
    "authorization_present",
    "authorization_reverse",
    "authorizations_expire",
    "card_return_create",
]
