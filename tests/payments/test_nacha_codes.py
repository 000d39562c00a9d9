"""The NACHA code tables: transaction codes, return reason codes with their normalized names
and windows, the dishonored and contested ranges, the change codes."""

import itertools

import pytest

from payments.nacha.codes import (
    CHANGE_CODES,
    RETURN_REASONS,
    SIXTY_CALENDAR_DAYS,
    TRANSACTION_CODES,
    TWO_BANKING_DAYS,
    return_kind,
    return_reason,
    transaction_code,
)


def test_transaction_codes():
    assert transaction_code("credit", "checking") == 22
    assert transaction_code("credit", "checking", prenote=True) == 23
    assert transaction_code("debit", "checking") == 27
    assert transaction_code("debit", "checking", prenote=True) == 28
    assert transaction_code("credit", "savings") == 32
    assert transaction_code("debit", "savings", prenote=True) == 38
    assert {code for code, each in TRANSACTION_CODES.items() if each.is_return_or_noc} == {
        21,
        26,
        31,
        36,
    }
    # A return of a debit is a debit: the batch totals count it so.
    assert TRANSACTION_CODES[26].direction == "debit"
    assert TRANSACTION_CODES[31].direction == "credit"


def test_every_return_code_of_the_rules_is_known():
    # R01-R47 but R48-R49, R50-R53, R61, R62, R67-R77, R80-R85: R54-R60 and R78-R79 are not
    # codes; R63-R66 were merged into R69 in 2006.
    expected = (
        [f"R{n:02d}" for n in range(1, 48)]
        + [f"R{n:02d}" for n in range(50, 54)]
        + ["R61", "R62"]
        + [f"R{n:02d}" for n in range(67, 78)]
        + [f"R{n:02d}" for n in range(80, 86)]
    )
    assert sorted(RETURN_REASONS) == expected


@pytest.mark.parametrize(
    ("code", "normalized", "window"),
    [
        ("R01", "insufficient_funds", TWO_BANKING_DAYS),
        ("R02", "account_closed", TWO_BANKING_DAYS),
        ("R03", "no_account", TWO_BANKING_DAYS),
        ("R04", "invalid_account_number", TWO_BANKING_DAYS),
        ("R05", "unauthorized", SIXTY_CALENDAR_DAYS),
        ("R07", "authorization_revoked", SIXTY_CALENDAR_DAYS),
        ("R08", "payment_stopped", TWO_BANKING_DAYS),
        ("R10", "unauthorized", SIXTY_CALENDAR_DAYS),
        ("R11", "not_as_authorized", SIXTY_CALENDAR_DAYS),
        ("R16", "account_frozen", TWO_BANKING_DAYS),
        # A corporate receiver's unauthorized debit: 2 banking days, not the consumer's 60.
        ("R29", "unauthorized", TWO_BANKING_DAYS),
        ("R51", "rck_item_ineligible", SIXTY_CALENDAR_DAYS),
        # Returns by agreement with the ODFI have no window.
        ("R06", "returned_per_odfi_request", None),
    ],
)
def test_return_reasons(code, normalized, window):
    reason = return_reason(code)
    assert (reason.normalized, reason.window, reason.kind) == (normalized, window, "return")


def test_dishonored_and_contested_ranges():
    assert {code for code, each in RETURN_REASONS.items() if each.kind == "dishonored"} == {
        "R61",
        "R62",
        "R67",
        "R68",
        "R69",
        "R70",
    }
    assert {code for code, each in RETURN_REASONS.items() if each.kind == "contested"} == {
        f"R{n}" for n in range(71, 78)
    }
    assert return_reason("R68").window.days == 5
    assert return_reason("R73").window == TWO_BANKING_DAYS
    assert [return_kind(code) for code in ("R60", "R61", "R70", "R71", "R77", "R78")] == [
        "return",
        "dishonored",
        "dishonored",
        "contested",
        "contested",
        "return",
    ]


def test_an_unknown_code_is_read_as_unknown():
    reason = return_reason("R90")
    assert (reason.code, reason.normalized, reason.window, reason.kind) == (
        "R90",
        "unknown",
        None,
        "return",
    )


def test_change_codes():
    assert sorted(CHANGE_CODES) == [f"C{n:02d}" for n in range(1, 15)]
    parts = {code: [name for name, _, _ in each.parts] for code, each in CHANGE_CODES.items()}
    assert parts["C01"] == ["account_number"]
    assert parts["C02"] == ["routing_number"]
    assert parts["C07"] == ["routing_number", "account_number", "transaction_code"]
    # Every part lies within the 29 positions of the Corrected Data, without overlap.
    for each in CHANGE_CODES.values():
        spans = sorted((start, end) for _, start, end in each.parts)
        assert all(1 <= start <= end <= 29 for start, end in spans)
        assert all(previous[1] < current[0] for previous, current in itertools.pairwise(spans))
