"""The customer page, and the staff lockouts' page (docs/back-office.md).

The customer page: a customer's accounts, cards and newest statement lines together, on the
customer's change page (docs/back-office.md).

`customers` sits below `accounts` and `cards` (docs/architecture.md), so its admin cannot show
them; this app, at the top, registers the customer's admin again with three read-only panels
added. They are panels, not inlines: the customer form still saves through `customer_update`
alone, with no formset to post. Nothing secret is read: cards without their secret columns
(`cards.admin.SECRET_FIELDS`, shown by masked PAN), account numbers by their last four digits,
the national id by its last four (the customer admin's own field).
"""

from heapq import merge

from django.contrib import admin
from django.db.models import Q
from django.utils.html import format_html, format_html_join
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.admin import (
    LINE_STATE_RELATED,
    LINE_STATES,
    line_amount_display,
    line_state,
    masked_account_number,
)
from accounts.models import Account, StatementLine
from accounts.models.statement import POSITION
from backoffice.models import SignInLockout
from cards.admin import SECRET_FIELDS
from cards.models import Card
from core.admin import ReadOnlyModelAdmin, admin_link, changelist_link
from core.money import money
from customers.admin import CustomerAdmin
from customers.models import Customer

# Rows each panel shows at most; a link under it lists them all.
PANEL_ROWS = 20


def _table(headers: list[str], rows, empty: str, more):
    if not rows:
        return format_html("<p>{}</p>{}", empty, more)
    head = format_html_join("", "<th>{}</th>", ((header,) for header in headers))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows),
    )
    return format_html(
        '<table class="customer-panel"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>{}',
        head,
        body,
        more,
    )


class CustomerPageAdmin(CustomerAdmin):
    fieldsets = [
        *CustomerAdmin.fieldsets,
        (
            "Accounts, cards and recent statement lines",
            {"fields": ["accounts_panel", "cards_panel", "statement_lines_panel"]},
        ),
    ]
    readonly_fields = [
        *CustomerAdmin.readonly_fields,
        "accounts_panel",
        "cards_panel",
        "statement_lines_panel",
    ]

    def _accounts(self, customer) -> list[Account]:
        if not hasattr(customer, "_panel_accounts"):
            customer._panel_accounts = list(
                Account.objects.filter(Q(customer=customer) | Q(secondary_customer=customer))
                .select_related("product")
                .order_by("-pk")[:PANEL_ROWS]
            )
        return customer._panel_accounts

    @admin.display(description="accounts")
    def accounts_panel(self, customer):
        rows = [
            (
                admin_link(account, account.pk),
                "holder" if account.customer_id == customer.pk else "secondary holder",
                account.product.code if account.product else "—",
                masked_account_number(account),
                account.status,
                money(account.posted, account.currency),
                money(account.available, account.currency),
            )
            for account in self._accounts(customer)
        ]
        return _table(
            ["account", "role", "product", "number", "status", "posted", "available"],
            rows,
            "No account.",
            changelist_link(Account, "All accounts of this customer", customer=customer.pk),
        )

    @admin.display(description="cards")
    def cards_panel(self, customer):
        cards = (
            Card.objects.defer(*SECRET_FIELDS)
            .filter(customer=customer)
            .select_related("product")
            .order_by("-pk")[:PANEL_ROWS]
        )
        rows = [
            (
                admin_link(card, card.masked_pan),
                card.status,
                card.form,
                card.product.code,
                f"{card.expiry_month:02d}/{card.expiry_year}",
                card.account_id,
            )
            for card in cards
        ]
        return _table(
            ["card (masked PAN)", "status", "form", "product", "expiry", "account"],
            rows,
            "No card.",
            changelist_link(Card, "All cards of this customer", customer=customer.pk),
        )

    @admin.display(description=f"statement lines (newest {PANEL_ROWS})")
    def statement_lines_panel(self, customer):
        # Each account's newest lines from its own index, merged: no sort of every line of
        # every account.
        newest = (
            StatementLine.objects.filter(account=account)
            .select_related(*LINE_STATE_RELATED)
            .order_by(POSITION.desc())[:PANEL_ROWS]
            for account in self._accounts(customer)
        )
        lines = list(merge(*newest, key=lambda line: line.pk, reverse=True))[:PANEL_ROWS]
        rows = [
            (
                line.created_at.strftime("%Y-%m-%d %H:%M"),
                admin_link(line, line.pk),
                line.account_id,
                line.type,
                LINE_STATES[line_state(line)],
                line_amount_display(line),
                line.description or "—",
            )
            for line in lines
        ]
        return _table(
            ["at", "line", "account", "type", "state", "amount", "description"],
            rows,
            "No statement line.",
            "",
        )


admin.site.unregister(Customer)
admin.site.register(Customer, CustomerPageAdmin)


@admin.register(SignInLockout)
class SignInLockoutAdmin(ReadOnlyModelAdmin):
    """The lockouts of staff usernames (backoffice.lockouts), for whoever investigates them:
    superusers, or a group an administrator gives the view permission. Lifting a lockout is
    `manage.py axes_reset_username` or deleting the username's rows under "Access attempts"
    (docs/back-office.md)."""

    institution_path = None  # a staff username belongs to no institution
    list_display = ("username", "started_at", "ip_address", "refused_attempts", "last_refused_at")
    search_fields = ("=username",)
    date_hierarchy = "started_at"
    ordering = ("-started_at",)


# django-otp's own admins show each device's secret key and its QR code: whoever could open
# them could copy a colleague's authenticator. Devices are made by enrolment and removed by
# `manage.py reset_second_factor` (backoffice.second_factor), never edited here.
admin.site.unregister(TOTPDevice)
admin.site.unregister(StaticDevice)
