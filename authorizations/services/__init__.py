from .authorize import authorization_create
from .clearing import authorization_present, authorization_reverse, authorizations_expire
from .increment_program import (
    increment_ask_program,
    increment_decide,
    increment_program_to_ask,
    increments_resolve_stranded,
)
from .increments import authorization_increment
from .network import authorization_record_network
from .program import (
    authorization_ask_program,
    authorization_decide,
    authorizations_resolve_stranded,
    program_to_ask,
)
from .returns import card_return_create

__all__ = [
    "authorization_ask_program",
    "authorization_create",
    "authorization_decide",
    "authorization_increment",
    "increment_ask_program",
    "increment_decide",
    "increment_program_to_ask",
    "increments_resolve_stranded",
    "authorization_record_network",
    "authorizations_resolve_stranded",
    "program_to_ask",
    "authorization_present",
    "authorization_reverse",
    "authorizations_expire",
    "card_return_create",
]
