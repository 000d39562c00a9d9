"""An institution's calendar (institutions.calendar, docs/calendar.md): business days across
weekends and holidays, its own weekend, its time zone, the bound; holidays in the back office.

2026-01-01 is a Thursday; 2026-04-03 and 2026-04-06 are Good Friday and Easter Monday;
2026-07-04 is a Saturday."""

import random
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, transaction
from django.urls import reverse

from core.exceptions import AlreadyExists, ValidationFailed
from institutions.calendar import (
    MAX_BUSINESS_DAYS,
    business_days_after,
    is_business_day,
    local_date,
)
from institutions.models import Holiday, Institution
from institutions.services import holiday_add, holiday_remove, institution_create
from tests.backoffice.helpers import staff
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

D = date.fromisoformat


def holidays(institution, *days: str) -> None:
    for day in days:
        holiday_add(institution=institution, date=D(day), name=f"Holiday {day}")


def make_institution(**kwargs) -> Institution:
    name = f"Calendar Bank {Institution.objects.count():04d}"
    return institution_create(name=name, **kwargs)[0]


# --- weekends -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("start", "days", "expected"),
    [
        ("2026-01-02", 1, "2026-01-05"),  # Friday + 1: Monday
        ("2026-01-03", 1, "2026-01-05"),  # Saturday + 1: Monday
        ("2026-01-04", 1, "2026-01-05"),  # Sunday + 1: Monday
        ("2026-01-02", 5, "2026-01-09"),  # Friday + 5: the next Friday
        ("2026-01-01", 10, "2026-01-15"),  # Thursday + 10: two weekends crossed
        ("2026-01-02", 0, "2026-01-02"),  # 0 on a business day: that day
        ("2026-01-03", 0, "2026-01-05"),  # 0 on a Saturday: the next business day
    ],
)
def test_business_days_across_a_weekend(institution, start, days, expected):
    assert institution.weekend_days == [6, 7]
    assert business_days_after(institution, D(start), days) == D(expected)


def test_is_business_day_on_weekdays_and_weekends(institution, django_assert_num_queries):
    with django_assert_num_queries(0):  # a weekend day needs no query
        assert is_business_day(institution, D("2026-01-03")) is False
        assert is_business_day(institution, D("2026-01-04")) is False
    with django_assert_num_queries(1):
        assert is_business_day(institution, D("2026-01-02")) is True


# --- holidays -------------------------------------------------------------------------------
def test_business_days_across_holidays(institution):
    holidays(institution, "2026-04-03", "2026-04-06")  # Good Friday, Easter Monday
    assert business_days_after(institution, D("2026-04-02"), 1) == D("2026-04-07")
    assert business_days_after(institution, D("2026-04-02"), 2) == D("2026-04-08")
    assert business_days_after(institution, D("2026-04-03"), 0) == D("2026-04-07")
    assert business_days_after(institution, D("2026-04-01"), 1) == D("2026-04-02")
    assert is_business_day(institution, D("2026-04-03")) is False
    assert is_business_day(institution, D("2026-04-07")) is True


def test_a_holiday_on_a_weekend_takes_no_extra_day(institution):
    holidays(institution, "2026-07-04")  # a Saturday: no substitute day unless one is added
    assert business_days_after(institution, D("2026-07-03"), 1) == D("2026-07-06")
    holidays(institution, "2026-07-03")  # the Friday observed
    assert business_days_after(institution, D("2026-07-02"), 1) == D("2026-07-06")
    assert business_days_after(institution, D("2026-07-02"), 2) == D("2026-07-07")


def test_another_institutions_holidays_are_not_counted(institution, other_institution):
    holidays(other_institution, "2026-01-05", "2026-01-06")
    assert business_days_after(institution, D("2026-01-02"), 1) == D("2026-01-05")
    assert business_days_after(other_institution, D("2026-01-02"), 1) == D("2026-01-07")
    assert is_business_day(institution, D("2026-01-05")) is True
    assert is_business_day(other_institution, D("2026-01-05")) is False


def test_one_query_for_the_holidays_of_the_range(institution, django_assert_num_queries):
    holidays(institution, "2026-12-24", "2026-12-25", "2026-12-31", "2027-01-01")
    with django_assert_num_queries(1):
        # Mon 28, Tue 29, Wed 30, then Thursday and Friday off, Mon 4, Tue 5.
        assert business_days_after(institution, D("2026-12-23"), 5) == D("2027-01-05")
    with django_assert_num_queries(1):
        # 732 weeks of five business days from a Friday end on the Friday 5124 days later;
        # the four holidays on weekdays push it to the Thursday after.
        assert business_days_after(institution, D("2026-01-02"), 3660) == D("2040-01-19")
    assert D("2026-01-02") + timedelta(days=5124 + 6) == D("2040-01-19")


def test_a_second_calendar_closes_days_too(institution, django_assert_num_queries):
    """`also_open`: a rail's calendar (payments.calendar) on top of the institution's."""
    holidays(institution, "2026-01-06")
    rail_closed = {D("2026-01-05"), D("2026-01-07")}  # the Monday, the Wednesday

    def rail_open(day: date) -> bool:
        return day not in rail_closed

    with django_assert_num_queries(1):  # still one query for the institution's holidays
        assert business_days_after(institution, D("2026-01-02"), 1, also_open=rail_open) == D(
            "2026-01-08"
        )
    assert business_days_after(institution, D("2026-01-05"), 0, also_open=rail_open) == D(
        "2026-01-08"
    )
    assert business_days_after(institution, D("2026-01-02"), 2, also_open=rail_open) == D(
        "2026-01-09"
    )


def test_more_than_a_year_of_holidays_is_read_on(institution, django_assert_num_queries):
    # Every weekday from 2026-01-02 to 2027-06-30 a holiday: past the first read's margin.
    day, days_off = D("2026-01-02"), []
    while day <= D("2027-06-30"):
        if day.isoweekday() < 6:
            days_off.append(Holiday(institution=institution, date=day, name="Closed"))
        day += timedelta(days=1)
    Holiday.objects.bulk_create(days_off)
    with django_assert_num_queries(2):
        assert business_days_after(institution, D("2026-01-01"), 1) == D("2027-07-01")
    assert business_days_after(institution, D("2026-01-01"), 2) == D("2027-07-02")
    assert business_days_after(institution, D("2026-01-01"), 3) == D("2027-07-05")


def reference(weekend: set[int], days_off: set[date], start: date, days: int) -> date:
    """The contract counted the slow way, one day at a time."""

    def business(day: date) -> bool:
        return day.isoweekday() not in weekend and day not in days_off

    if days == 0:
        day = start
        while not business(day):
            day += timedelta(days=1)
        return day
    day = start
    while days:
        day += timedelta(days=1)
        days -= business(day)
    return day


def test_agrees_with_counting_day_by_day():
    generator = random.Random(32)
    for weekend in ([6, 7], [5, 6], [7], [], [1, 2, 3, 4, 5, 6]):
        institution = make_institution(weekend_days=weekend)
        days_off = {D("2026-01-01") + timedelta(days=generator.randrange(730)) for _ in range(80)}
        Holiday.objects.bulk_create(
            Holiday(institution=institution, date=day, name="Off") for day in days_off
        )
        for _ in range(60):
            start = D("2026-01-01") + timedelta(days=generator.randrange(400))
            days = generator.choice([0, 1, 2, 5, 10, 45, generator.randrange(300)])
            assert business_days_after(institution, start, days) == reference(
                set(weekend), days_off, start, days
            ), (weekend, start, days)


# --- the institution's weekend ------------------------------------------------------------
def test_a_friday_and_saturday_weekend():
    institution = make_institution(weekend_days=[6, 5])
    assert institution.weekend_days == [5, 6]
    assert business_days_after(institution, D("2026-01-01"), 1) == D("2026-01-04")  # Sunday
    assert business_days_after(institution, D("2026-01-02"), 0) == D("2026-01-04")
    assert business_days_after(institution, D("2026-01-01"), 3) == D("2026-01-06")
    assert is_business_day(institution, D("2026-01-04")) is True
    assert is_business_day(institution, D("2026-01-02")) is False


@pytest.mark.parametrize("weekend", [[0], [8], [1, 2, 3, 4, 5, 6, 7], "67", [True]])
def test_the_service_refuses_a_weekend_that_is_not_one(weekend):
    with pytest.raises(ValidationFailed) as refused:
        make_institution(weekend_days=weekend)
    assert refused.value.details == {"weekend_days": weekend}


@pytest.mark.parametrize("weekend", [[0], [8], [1, 2, 3, 4, 5, 6, 7]])
def test_postgresql_refuses_a_weekend_that_is_not_one(institution, weekend):
    with pytest.raises(IntegrityError, match="institution_weekend_days_valid"):
        with transaction.atomic():
            Institution.objects.filter(pk=institution.pk).update(weekend_days=weekend)
    institution.refresh_from_db()
    assert institution.weekend_days == [6, 7]


# --- time zone --------------------------------------------------------------------------------
def test_local_date_is_the_institutions_date():
    new_york = make_institution(time_zone="America/New_York")
    kiritimati = make_institution(time_zone="Pacific/Kiritimati")  # UTC+14
    utc = make_institution()
    instant = datetime(2026, 1, 2, 3, 0, tzinfo=UTC)  # 22:00 on Thursday in New York
    assert local_date(new_york, instant) == D("2026-01-01")
    assert local_date(utc, instant) == D("2026-01-02")
    assert local_date(kiritimati, datetime(2026, 1, 1, 10, 0, tzinfo=UTC)) == D("2026-01-02")
    assert local_date(new_york, datetime(2026, 1, 2, 5, 0, tzinfo=UTC)) == D("2026-01-02")
    # A deadline counted from a notice at that instant: from Thursday there, Friday here.
    assert business_days_after(new_york, local_date(new_york, instant), 1) == D("2026-01-02")
    assert business_days_after(utc, local_date(utc, instant), 1) == D("2026-01-05")
    with pytest.raises(ValueError):
        local_date(utc, datetime(2026, 1, 2, 3, 0))  # noqa: DTZ001 (naive on purpose)


# --- the bound --------------------------------------------------------------------------------
@pytest.mark.parametrize("days", [-1, MAX_BUSINESS_DAYS + 1, 10**9])
def test_days_out_of_bounds_are_refused(institution, days, django_assert_num_queries):
    with django_assert_num_queries(0), pytest.raises(ValueError, match="from 0 to 3660"):
        business_days_after(institution, D("2026-01-02"), days)


@pytest.mark.parametrize("days", [1.0, "1", True])
def test_days_must_be_an_int(institution, days):
    with pytest.raises(TypeError):
        business_days_after(institution, D("2026-01-02"), days)


# --- holidays: the services -----------------------------------------------------------------
def test_a_date_is_a_holiday_once(institution, other_institution):
    holiday = holiday_add(institution=institution, date=D("2026-12-25"), name="  Christmas ")
    assert (holiday.date, holiday.name) == (D("2026-12-25"), "Christmas")
    with pytest.raises(AlreadyExists) as refused, transaction.atomic():
        holiday_add(institution=institution, date=D("2026-12-25"), name="Again")
    assert (refused.value.status, refused.value.code) == (409, "already_exists")
    assert refused.value.details == {"date": "2026-12-25"}
    holiday_add(institution=other_institution, date=D("2026-12-25"), name="Christmas")
    assert list(Holiday.objects.values_list("institution_id", "name").order_by("pk")) == [
        (institution.pk, "Christmas"),
        (other_institution.pk, "Christmas"),
    ]
    holiday_remove(holiday=holiday)
    assert is_business_day(institution, D("2026-12-25")) is True
    assert is_business_day(other_institution, D("2026-12-25")) is False


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_holiday_needs_a_name(institution, name):
    with pytest.raises(ValidationFailed) as refused:
        holiday_add(institution=institution, date=D("2026-12-25"), name=name)
    assert refused.value.details == {"name": "Required, at most 100 characters."}
    assert not Holiday.objects.exists()


# --- holidays in the back office --------------------------------------------------------------
def admin_url(view="changelist", *args):
    return reverse(f"admin:institutions_holiday_{view}", args=args)


def holiday_editor(username, institution):
    """A staff user of `institution` with what a group made for holidays would grant."""
    user = staff(username, institutions=[institution])
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="institutions",
            codename__in=["add_holiday", "view_holiday", "delete_holiday"],
        )
    )
    return type(user).objects.get(pk=user.pk)  # no permission cache


def test_staff_add_and_remove_their_institutions_holidays(client, institution, other_institution):
    holidays(other_institution, "2026-12-25")
    sign_in(client, holiday_editor("calendar", institution))
    response = client.get(admin_url())
    assert response.status_code == 200
    assert [h.pk for h in response.context["cl"].result_list] == []  # not the other's
    action_form = response.context["action_form"]  # removal one at a time, from its page
    assert action_form is None or "delete_selected" not in dict(
        action_form.fields["action"].choices
    )
    response = client.get(admin_url("add"))
    assert list(response.context["adminform"].form.fields["institution"].queryset) == [institution]
    body = {"institution": institution.pk, "date": "2026-12-25", "name": "Christmas"}
    assert client.post(admin_url("add"), {**body, "_save": "1"}).status_code == 302
    holiday = Holiday.objects.get(institution=institution)
    assert (holiday.date, holiday.name) == (D("2026-12-25"), "Christmas")
    assert business_days_after(institution, D("2026-12-24"), 1) == D("2026-12-28")
    # The same date again: refused on the form, nothing added.
    response = client.post(admin_url("add"), {**body, "name": "Again", "_save": "1"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert Holiday.objects.filter(institution=institution).count() == 1
    # Another institution's: not in the list, and neither shown nor removed by id.
    theirs = Holiday.objects.get(institution=other_institution)
    assert client.get(admin_url("change", theirs.pk)).status_code == 302
    client.post(admin_url("delete", theirs.pk), {"post": "yes"})
    assert Holiday.objects.filter(pk=theirs.pk).exists()
    response = client.post(admin_url("delete", holiday.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Holiday.objects.filter(pk=holiday.pk).exists()
    assert business_days_after(institution, D("2026-12-24"), 1) == D("2026-12-25")


def test_holidays_are_viewed_not_edited_by_the_roles(client, institution):
    holidays(institution, "2026-12-25")
    holiday = Holiday.objects.get()
    sign_in(client, staff("support", roles=["support"], institutions=[institution]))
    response = client.get(admin_url())
    assert [h.pk for h in response.context["cl"].result_list] == [holiday.pk]
    assert client.get(admin_url("add")).status_code == 403
    assert client.post(admin_url("delete", holiday.pk), {"post": "yes"}).status_code == 403
    assert client.get(admin_url("change", holiday.pk)).status_code == 200  # view only


def test_the_weekend_chosen_when_the_institution_is_added(admin_client):
    add = reverse("admin:institutions_institution_add")
    body = {"name": "Gulf Bank", "currency": "AED", "time_zone": "Asia/Dubai"}
    response = admin_client.post(add, {**body, "weekend_days": "6,7,8"})
    assert response.status_code == 200
    assert "weekend_days" in response.context["adminform"].form.errors
    response = admin_client.post(add, {**body, "weekend_days": "6,5", "_save": "1"})
    assert response.status_code == 302
    assert Institution.objects.get(name="Gulf Bank").weekend_days == [5, 6]
    for name, sent in [("Plain Bank", {}), ("Blank Bank", {"weekend_days": ""})]:
        response = admin_client.post(add, {**body, "name": name, **sent, "_save": "1"})
        assert response.status_code == 302
        assert Institution.objects.get(name=name).weekend_days == [6, 7]
