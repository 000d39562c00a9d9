"""`manage.py ach_profile`: an institution's ACH profile made whole, changed a field at a time,
and refused naming each wrong field with the profile as it was."""

import pytest
from django.core.management.base import CommandError

from payments.models import AchProfile
from tests.institutions.test_commands import run_json
from tests.payments.helpers import DEMO_PROFILE_ARGS

pytestmark = pytest.mark.django_db


def test_a_profile_is_made_whole_then_changed_a_field_at_a_time(institution):
    made = run_json("ach_profile", "--institution", institution.pk, *DEMO_PROFILE_ARGS)
    assert (made["odfi_routing_number"], made["next_day_cutoff"], made["same_day_cutoffs"]) == (
        "011000015",
        "16:45",
        [],
    )
    changed = run_json(
        "ach_profile", "--institution", institution.name,
        "--same-day-cutoff", "10:30", "--same-day-cutoff", "14:45", "--require-verified", "yes",
    )  # fmt: skip
    assert (changed["same_day_cutoffs"], changed["require_verified"]) == (["10:30", "14:45"], True)
    assert changed["company_name"] == "TX Demo Bank"
    assert AchProfile.objects.count() == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--odfi-routing-number", "011000016"], "odfi_routing_number.*ABA routing number"),
        (["--company-name", "A" * 17], "company_name.*1 to 16 printable ASCII"),
        (["--odfi-name", "Bänk"], "odfi_name.*printable ASCII"),
        (["--next-day-cutoff", "24:00"], "next_day_cutoff.*HH:MM"),
        (["--same-day-cutoff", "14:45", "--same-day-cutoff", "10:30"], "same_day_cutoffs.*order"),
        (["--debit-hold-days", "61"], "debit_hold_days"),
    ],
)
def test_a_wrong_field_is_named_and_the_profile_is_as_it_was(institution, args, message):
    run_json("ach_profile", "--institution", institution.pk, *DEMO_PROFILE_ARGS)
    before = list(AchProfile.objects.values())
    with pytest.raises(CommandError, match=message):
        run_json("ach_profile", "--institution", institution.pk, *args)
    assert list(AchProfile.objects.values()) == before


def test_a_new_profile_needs_its_bank_and_company(institution):
    with pytest.raises(CommandError, match="company_id.*Required for a new profile"):
        run_json("ach_profile", "--institution", institution.pk, "--next-day-cutoff", "16:00")
    assert not AchProfile.objects.exists()
