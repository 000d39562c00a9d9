"""The back office in a real browser: Playwright drives Chromium against the live server.

They need the `playwright` package (a dev dependency) and a Chromium: Debian's
(`apt-get install chromium`, at /usr/bin/chromium) or the one `TX_CHROMIUM` names. Without
either they are skipped, saying which is missing. Playwright's own browser download is not
used (`playwright install` is never needed).
"""

import os
import re
from base64 import b32decode
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connections
from django.utils import timezone
from django_otp.oath import TOTP

from accounts.models import Account, Adjustment, Hold
from backoffice.models import AppDevice, ApprovalRequest
from backoffice.second_factor import enrolment_token_issue
from cards.models import Card
from core.money import money
from monitoring.models import MonitoringAlert
from tests.backoffice.helpers import restore_roles, staff
from tests.cards.helpers import make_institution
from tests.events.test_actor import AdminWorld, _alert, _failed_delivery
from tests.staff import app_code, app_device

CHROMIUM = Path(os.environ.get("TX_CHROMIUM", "/usr/bin/chromium"))
# Where the walks leave their screenshots (a test artifact; not in git).
ARTIFACTS = Path(os.environ.get("TX_TEST_ARTIFACTS", "test-artifacts"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="browser tests need the playwright package (a dev dependency, in requirements.lock)",
)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"browser tests need Chromium at {CHROMIUM}: apt-get install chromium "
        "(or set TX_CHROMIUM to its path)",
    ),
]


@pytest.fixture
def browser(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # synchronous and do not share it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # Inside Playwright's loop the ORM has connections of its own (asgiref's locals
            # follow the loop's context): left open, they keep the test database from being
            # dropped at the end of the run.
            connections.close_all()


@pytest.fixture
def world(transactional_db):
    # A live-server test empties every table after it, the migration's groups too.
    restore_roles()
    return AdminWorld(make_institution())


def signed_in(browser, live_server, user):
    """Signed in as staff do: password, then the code their authenticator app shows, computed
    here from the device's key as the phone would."""
    device = app_device(user)
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", user.get_username())
    page.fill("#id_password", "pw")
    page.fill("#id_otp_token", app_code(device))
    page.click("input[type=submit]")
    sync_api.expect(page.locator("#site-name")).to_have_text("TX back office")
    sync_api.expect(page.locator("#work-queues")).to_be_visible()
    return page


def test_a_first_sign_in_enrols_the_app_then_signs_in_with_its_codes(browser, live_server, world):
    user = staff("newcomer", roles=["support"], institutions=[world.institution])
    # What `create_staff_user` prints, handed to the newcomer in person.
    token = enrolment_token_issue(user=user, via="test").token
    page = browser.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "newcomer")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    # No app yet: the password alone is not enough, the enrolment token is asked for.
    sync_api.expect(page.locator(".errornote")).to_contain_text(
        "enter the enrolment token you were given"
    )
    page.fill("#id_password", "pw")
    page.fill("#id_otp_token", token)
    page.click("input[type=submit]")

    # Led to enrolment, which shows a QR code and the key to type, made for this session.
    sync_api.expect(page.locator("h1")).to_have_text("Set up your second factor")
    sync_api.expect(page.locator("#second-factor-qr svg")).to_be_visible()
    secret = page.locator("#second-factor-secret").inner_text().replace(" ", "")
    phone = TOTP(b32decode(secret))  # what the app computes from the scanned key
    page.fill("#id_code", f"{phone.token():06d}")
    page.click("input[type=submit][value=Confirm]")

    sync_api.expect(page.locator("h1")).to_have_text("Your recovery codes")
    sync_api.expect(page.locator("#recovery-codes li")).to_have_count(10)
    code = page.locator("#recovery-codes li").first.inner_text()
    page.click("#recovery-codes-done")
    sync_api.expect(page.locator("#work-queues")).to_be_visible()

    # Signed out, a password alone is not enough any more; a recovery code is.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "newcomer")
    page.fill("#id_password", "pw")
    page.click("input[type=submit]")
    sync_api.expect(page.locator(".errornote")).to_contain_text(
        "Enter the code of your authenticator app"
    )
    page.fill("#id_password", "pw")
    page.fill("#id_otp_token", code)
    page.click("input[type=submit]")
    sync_api.expect(page.locator("#work-queues")).to_be_visible()
    assert AppDevice.objects.get(user=user).confirmed


def queue_row(page, name: str):
    return page.locator("tr.work-queue", has=page.locator("th", has_text=name))


def test_the_dashboard_shows_the_queues_and_their_rows(browser, live_server, world):
    _alert(world)
    _failed_delivery(world)
    Hold.objects.filter(pk=world["hold"]).update(expires_at=timezone.now())
    user = staff("support", roles=["support"], institutions=[world.institution])
    page = signed_in(browser, live_server, user)

    queues = page.locator("#work-queues")
    sync_api.expect(queues).to_contain_text("Work queues")
    expected = {
        "Open monitoring alerts": "1",
        "Failed webhook deliveries": "1",
        "Holds expiring today": "1",
        "API keys and staff users suspected of PAN guessing": "0",
    }
    for name, count in expected.items():
        sync_api.expect(queue_row(page, name).locator("a.work-queue-count")).to_have_text(count)

    queue_row(page, "Open monitoring alerts").locator("a.work-queue-count").click()
    sync_api.expect(page).to_have_url(re.compile(r"/admin/monitoring/monitoringalert/\?"))
    sync_api.expect(page.locator("#result_list tbody tr")).to_have_count(1)
    sync_api.expect(page.locator("#result_list")).to_contain_text(MonitoringAlert.objects.get().pk)


def test_operations_suspend_a_card_through_the_action(browser, live_server, world):
    card_id = world["card"]
    user = staff("operations", roles=["operations"], institutions=[world.institution])
    page = signed_in(browser, live_server, user)

    page.goto(f"{live_server.url}/admin/cards/card/")
    page.locator(f'#result_list input[name="_selected_action"][value="{card_id}"]').check()
    page.select_option("select[name=action]", "suspend_cards")
    page.click("button[name=index]")
    sync_api.expect(page.locator("h1")).to_have_text("Suspend cards")
    page.fill("textarea[name=reason]", "Reported lost by the cardholder on the phone.")
    page.click("input[type=submit]")

    sync_api.expect(page.locator("ul.messagelist")).to_contain_text("Suspended 1 card(s).")
    card = Card.objects.get(pk=card_id)
    assert (card.status, card.status_reason) == (
        "suspended",
        "Reported lost by the cardholder on the phone.",
    )


def test_operations_freeze_an_account_from_its_page_with_a_reason(browser, live_server, world):
    """The account's page is headed by its name; its Freeze button shows the account with its
    balance and asks for the reason (the browser does not send the form without one), then
    comes back to the page, the account frozen and the reason in its history."""
    account_id = world["account"]
    account = Account.objects.get(pk=account_id)
    name = f"Account {account_id} ({account.currency})"
    user = staff("operations", roles=["operations"], institutions=[world.institution])
    page = signed_in(browser, live_server, user)
    page.set_viewport_size({"width": 1400, "height": 900})
    url = f"{live_server.url}/admin/accounts/account/{account_id}/change/"

    page.goto(url)
    sync_api.expect(page.locator("h1")).to_have_text(name)
    sync_api.expect(page).to_have_title(f"{name} | TX back office")
    page.click("button.object-action-button[value=freeze_accounts]")
    sync_api.expect(page.locator("h1")).to_have_text("Freeze accounts")
    sync_api.expect(page.locator("#content")).to_contain_text(
        money(account.posted, account.currency)
    )
    page.click("input[type=submit]")  # no reason: the required field stops it here
    sync_api.expect(page.locator("h1")).to_have_text("Freeze accounts")
    assert Account.objects.get(pk=account_id).status == "active"

    page.fill("textarea[name=reason]", "Card fraud suspected, the customer was told.")
    page.click("input[type=submit]")
    sync_api.expect(page.locator("ul.messagelist")).to_contain_text("Froze 1 account(s).")
    sync_api.expect(page.locator("h1")).to_have_text(name)
    assert page.url == url
    assert Account.objects.get(pk=account_id).status == "frozen"
    assert LogEntry.objects.get(object_id=account_id).get_change_message() == (
        "Status active → frozen (admin action “Freeze”; reason: “Card fraud suspected, the "
        "customer was told.”)."
    )


def test_compliance_resolve_an_alert(browser, live_server, world):
    alert_id = _alert(world)
    user = staff("compliance", roles=["compliance"], institutions=[world.institution])
    page = signed_in(browser, live_server, user)

    page.goto(f"{live_server.url}/admin/monitoring/monitoringalert/?status__exact=open")
    page.locator(f'#result_list input[name="_selected_action"][value="{alert_id}"]').check()
    page.select_option("select[name=action]", "resolve_alerts")
    page.click("button[name=index]")
    page.fill("textarea[name=note]", "Known grocery store; the cardholder confirmed.")
    page.click("input[type=submit]")

    sync_api.expect(page.locator("ul.messagelist")).to_contain_text("Resolved 1 alert(s).")
    alert = MonitoringAlert.objects.get(pk=alert_id)
    assert (alert.status, alert.resolved_by_id, alert.resolution_note) == (
        "resolved",
        user.pk,
        "Known grocery store; the cardholder confirmed.",
    )


def test_operations_ask_for_an_adjustment_and_compliance_approves_it(browser, live_server, world):
    """Four eyes (docs/back-office.md): one user asks, another approves; only then it posts."""
    account_id = world["account"]
    before = Account.objects.get(pk=account_id).posted
    maker = staff("operations", roles=["operations"], institutions=[world.institution])
    checker = staff("compliance", roles=["compliance"], institutions=[world.institution])

    asking = signed_in(browser, live_server, maker)
    asking.goto(f"{live_server.url}/admin/accounts/account/")
    asking.locator(f'#result_list input[name="_selected_action"][value="{account_id}"]').check()
    asking.select_option("select[name=action]", "request_adjustment")
    asking.click("button[name=index]")
    sync_api.expect(asking.locator("h1")).to_have_text("Adjust the balance")
    asking.select_option("select[name=direction]", "credit")
    asking.fill("input[name=amount]", "12.34")
    asking.fill("input[name=description]", "Goodwill credit")
    asking.fill("textarea[name=reason]", "Ticket 4711: charged twice.")
    asking.click("input[type=submit]")
    sync_api.expect(asking.locator("ul.messagelist")).to_contain_text("Asked for 1 change(s)")
    assert Account.objects.get(pk=account_id).posted == before  # nothing moved yet

    deciding = signed_in(browser, live_server, checker)
    waiting = queue_row(deciding, "Approvals waiting").locator("a.work-queue-count")
    sync_api.expect(waiting).to_have_text("1")
    waiting.click()
    sync_api.expect(deciding.locator("#result_list tbody tr")).to_have_count(1)
    sync_api.expect(deciding.locator("#result_list")).to_contain_text("12.34 EUR")
    deciding.locator('#result_list input[name="_selected_action"]').check()
    deciding.select_option("select[name=action]", "approve_requests")
    deciding.click("button[name=index]")
    sync_api.expect(deciding.locator("h1")).to_have_text("Approve: approval requests")
    sync_api.expect(deciding.locator("#content")).to_contain_text("Ticket 4711: charged twice.")
    deciding.fill("textarea[name=reason]", "Checked the ticket.")
    deciding.click("input[type=submit]")

    sync_api.expect(deciding.locator("ul.messagelist")).to_contain_text("Approve: 1 request(s).")
    approval = ApprovalRequest.objects.get()
    assert (approval.status, approval.requested_by_id, approval.decided_by_id) == (
        "approved",
        maker.pk,
        checker.pk,
    )
    adjustment = Adjustment.objects.get(pk=approval.result_id)
    assert (adjustment.amount, adjustment.created_by_user_id) == (1_234, checker.pk)
    assert Account.objects.get(pk=account_id).posted == before + 1_234


def test_a_support_call_end_to_end(browser, live_server, world):
    """Issue 33 item 6, a cardholder on the phone, at 1400 x 900: found by their account
    number's last four, their page opened, a reversed payment shown as reversed, their card
    suspended with a reason, an adjustment asked for by one user and approved by another. A
    screenshot of each step under test-artifacts/support-call/."""
    from tests.authorizations.helpers import approved, reverse

    shots = ARTIFACTS / "support-call"
    shots.mkdir(parents=True, exist_ok=True)
    step = iter(range(1, 100))

    def shot(page, name: str) -> None:
        page.screenshot(path=str(shots / f"{next(step):02d}-{name}.png"), full_page=True)

    customer_id, account_id, card_id = world["customer"], world["account"], world["card"]
    payment = approved(world.api, card_id, 4_000)["authorizationId"]
    assert reverse(world.api, payment).status_code in (200, 201)
    number = Account.objects.get(pk=account_id).account_number
    operations = staff("operations", roles=["operations"], institutions=[world.institution])
    compliance = staff("compliance", roles=["compliance"], institutions=[world.institution])

    page = signed_in(browser, live_server, operations)
    page.set_viewport_size({"width": 1400, "height": 900})
    shot(page, "dashboard")
    # "The last four of my account number are ..."
    page.fill("#global-search-q", number[-4:])
    page.press("#global-search-q", "Enter")
    sync_api.expect(page.locator("h1")).to_have_text("Search")
    assert number not in page.content()
    shot(page, "search-by-last-four")
    page.locator(".search-group a", has_text="Ada").first.click()
    sync_api.expect(page.locator("#customer-details")).to_contain_text(customer_id)
    shot(page, "customer-page")
    # The reversed payment reads as reversed, not as a live debit.
    activity = page.locator(".customer-page-panel", has_text="Latest activity")
    sync_api.expect(activity).to_contain_text("reversed (not charged)")

    # "I lost my card": suspended, with the reason, from its page.
    page.locator(".customer-page-panel:has(h2:text-is('Cards'))").locator("a").first.click()
    page.click("button.object-action-button[value=suspend_cards]")
    sync_api.expect(page.locator("h1")).to_have_text("Suspend cards")
    page.fill("textarea[name=reason]", "Lost, the cardholder said on the phone.")
    shot(page, "suspend-confirmation")
    page.click("input[type=submit]")
    sync_api.expect(page.locator("ul.messagelist")).to_contain_text("Suspended 1 card(s).")
    shot(page, "card-suspended")
    card = Card.objects.get(pk=card_id)
    assert (card.status, card.status_reason) == (
        "suspended",
        "Lost, the cardholder said on the phone.",
    )

    # "I was charged a fee twice": a goodwill credit, asked for on the account's page.
    page.goto(f"{live_server.url}/admin/accounts/account/{account_id}/change/")
    before = Account.objects.get(pk=account_id).posted
    page.click("button.object-action-button[value=request_adjustment]")
    page.select_option("select[name=direction]", "credit")
    page.fill("input[name=amount]", "5.00")
    page.fill("input[name=description]", "Goodwill credit")
    page.fill("textarea[name=reason]", "Call of today: fee charged twice.")
    shot(page, "adjustment-request")
    page.click("input[type=submit]")
    sync_api.expect(page.locator("ul.messagelist")).to_contain_text("Asked for 1 change(s)")
    assert Account.objects.get(pk=account_id).posted == before

    checker = signed_in(browser, live_server, compliance)
    checker.set_viewport_size({"width": 1400, "height": 900})
    queue_row(checker, "Approvals waiting").locator("a.work-queue-count").click()
    checker.locator('#result_list input[name="_selected_action"]').check()
    checker.select_option("select[name=action]", "approve_requests")
    checker.click("button[name=index]")
    checker.fill("textarea[name=reason]", "Fee charged twice: checked.")
    shot(checker, "approval")
    checker.click("input[type=submit]")
    sync_api.expect(checker.locator("ul.messagelist")).to_contain_text("Approve: 1 request(s).")
    shot(checker, "approved")
    assert Account.objects.get(pk=account_id).posted == before + 500
    assert len(list(shots.glob("*.png"))) >= 8


def test_the_customer_page_shows_the_latest_activity_in_the_first_screen(
    browser, live_server, world
):
    """Issue 48 item 2: at 1400 x 900, the page as it opens (not scrolled) shows who the
    customer is and their newest lines, pending and posted, beside it; the details are full
    (address, e-mail, birth date, metadata), as a real customer's are."""
    from tests.authorizations.helpers import approved

    customer_id, card_id = world["customer"], world["card"]
    response = world.api.patch(
        f"/customers/{customer_id}",
        {
            "email": "ada@example.org",
            "phone": "+447700900123",
            "dateOfBirth": "1985-12-10",
            "nationalId": "GB-123-45-6789",
            "address": {
                "line1": "12 St James's Square",
                "city": "London",
                "postalCode": "SW1Y 4JH",
                "countryCode": "826",
            },
            "metadata": {"crmId": "4711", "segment": "retail"},
        },
    )
    assert response.status_code in (200, 201), response.content
    for amount in (1_250, 990, 4_000):
        approved(world.api, card_id, amount)
    support = staff("support", roles=["support"], institutions=[world.institution])

    page = signed_in(browser, live_server, support)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{live_server.url}/admin/customers/customer/{customer_id}/change/")
    sync_api.expect(page.locator("#customer-details")).to_contain_text(
        "London, SW1Y 4JH, United Kingdom"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "customer-page-first-screen.png"))

    assert page.evaluate("window.scrollY") == 0
    activity = page.locator("#customer-activity")
    sync_api.expect(activity.locator("h2")).to_contain_text("Latest activity")
    newest_pending = activity.locator("table").first.locator("tbody tr").first
    newest_posted = activity.locator("table").nth(1).locator("tbody tr").first
    sync_api.expect(newest_pending).to_contain_text("-40.00 EUR")
    sync_api.expect(newest_posted).to_contain_text("money in")
    for row in (newest_pending, newest_posted):
        box = row.bounding_box()
        assert box is not None
        assert box["y"] >= 0 and box["y"] + box["height"] <= 900, box
        assert box["x"] + box["width"] <= 1400, box
    # Nothing sideways: the page fits the window's width.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    html = page.content()
    assert "GB-123-45-6789" not in html
