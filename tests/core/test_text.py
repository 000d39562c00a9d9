"""What free text may hold: no card or account number (`core.text`)."""

import pytest
from stdnum import luhn

from core.text import has_card_or_account_number

PAN = "4111111111111111"  # Luhn-valid, 16 digits


def valid(body: str) -> str:
    return body + luhn.calc_check_digit(body)


@pytest.mark.parametrize(
    "text",
    [
        PAN,
        f"Card {PAN} used at the station",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        f"the number was {PAN}, then 2024",
        "4111 1111 1111 1111 2024",  # a year after it: the run of its own groups is found
        f"ref{PAN}",
        valid("5" * 18),  # 19 digits
        valid("3" * 12),  # 13 digits
        valid("12345678901"),  # an account number's 12
    ],
)
def test_a_card_or_account_number_is_found(text):
    assert has_card_or_account_number(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Cardholder called, card •••• 1111 at the station",
        "4111111111111112",  # the check digit wrong
        "4111 1111 1111 1112",
        valid("1234567890"),  # 11 digits
        valid("4" * 19),  # 20 digits: no card's or account's
        "On 2024-01-15 at 14:30, 1,000.00 EUR",
        "4111  1111  1111  1111",  # two spaces: four numbers of four digits
    ],
)
def test_other_numbers_are_not(text):
    assert not has_card_or_account_number(text)
