"""Every list of the back office fits a 1400 × 900 window (issue 33): no column of a clerk's
sits behind a horizontal scrollbar. A real Chromium (tests/backoffice/test_browser.py says how
it is found) opens each registered model's changelist as a new user finds it (the navigation
sidebar closed, docs/back-office.md "Lists that fit 1400 px"), for a superuser (every column,
every model) over a seeded institution (tests/backoffice/helpers.py `populated`), and reads the
page's scroll width and the results box's."""

import os
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.urls import reverse

from accounts.models import Account, Entry, Hold, StatementLine
from monitoring.models import MonitoringAlert
from tests.backoffice.helpers import populated, restore_roles
from tests.backoffice.test_browser import browser, pytestmark, signed_in  # noqa: F401
from tests.cards.helpers import make_institution

WIDTH, HEIGHT = 1400, 900
# A folder to keep a screenshot of each list in, to look at (not needed by the test).
SHOTS = Path(os.environ["TX_SCREENSHOTS"]) if os.environ.get("TX_SCREENSHOTS") else None
# The page's width, and the results table's beside the width its box shows: Django's
# `#changelist .results` scrolls sideways itself (`overflow-x: auto`), so a list too wide
# for the window hides its last columns behind a scrollbar of its own, not the page's. Read in
# one call with what the test checks first (a changelist, the sidebar closed): one round trip
# to the browser a page, not three.
OVERFLOW = """() => {
    const results = document.querySelector("#changelist .results");
    return {
        changelists: document.querySelectorAll("#changelist").length,
        shifted: document.getElementById("main").classList.contains("shifted"),
        page: document.documentElement.scrollWidth,
        results: results ? results.scrollWidth : 0,
        shown: results ? results.clientWidth : 0,
    };
}"""


@pytest.fixture
def seeded(transactional_db):
    restore_roles()
    return populated(make_institution())


def test_every_list_fits_1400_pixels(browser, live_server, seeded):  # noqa: F811
    for model in (Account, Hold, MonitoringAlert, StatementLine, Entry):
        assert model.objects.exists(), model  # measured with rows
    user = User.objects.create_superuser("admin", password="pw")
    page = signed_in(browser, live_server, user)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})

    overflowing = {}
    for model in sorted(admin.site._registry, key=lambda model: model._meta.label):
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        page.goto(f"{live_server.url}{url}")
        widths = page.evaluate(OVERFLOW)
        assert widths.pop("changelists") == 1, url
        assert widths.pop("shifted") is False, "the navigation sidebar starts closed"
        if SHOTS:
            page.screenshot(path=str(SHOTS / f"{opts.label}.png"))
        if widths["page"] > WIDTH or widths["results"] > widths["shown"]:
            overflowing[opts.label] = widths
    if overflowing:
        pytest.fail(f"lists wider than {WIDTH} px: {overflowing}")
