"""The back office's forms: the sign-in form (the password, then the second factor's code:
`backoffice.second_factor`), the four-eyes forms (an adjustment asked for, a reason for a
request or a decision: backoffice.services.approvals) and the staff actions' own forms."""

import re
from decimal import Decimal

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.signals import user_login_failed

from backoffice import second_factor
from backoffice.kit import no_card_or_account_number, reason_field
from backoffice.models import ApprovalRequest, ApprovalThreshold
from backoffice.services.thresholds import ALWAYS_ASKED
from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT, currency_exponent, money


class StaffLoginForm(AdminAuthenticationForm):
    """Username, password and a code (`backoffice.second_factor`): the app's code or a recovery
    code, or, for a staff user who has no app yet, their one-time enrolment token. A wrong code
    or token counts towards the username's lockout like a wrong password. The password alone
    signs nobody in."""

    otp_token = forms.CharField(
        label="Code",
        required=False,
        max_length=32,
        help_text="The 6 digits of your authenticator app, or one of your recovery codes. "
        "At your first sign-in (or after a reset): the enrolment token you were given.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "none"}),
    )

    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "code_required": "Enter the code of your authenticator app or a recovery code.",
        "code_wrong": "That code is wrong or used up. Wait for the app's next code and try again.",
        "token_required": "You have no authenticator app yet: enter the enrolment token you "
        "were given.",
        "token_wrong": "That enrolment token is wrong, used or expired. A superuser issues a "
        "new one (manage.py reset_second_factor).",
    }

    def clean(self):
        cleaned_data = super().clean()  # the password (axes counts a wrong one), staff only
        user = self.user_cache
        if user is None:
            return cleaned_data
        code = cleaned_data.get("otp_token", "")
        if not second_factor.has_second_factor(user):
            # First sign-in, or after a reset: the token handed over out of band, then a
            # session that reaches the enrolment page only (backoffice.sites).
            if not code:
                raise forms.ValidationError(
                    self.error_messages["token_required"], code="token_required"
                )
            token = second_factor.enrolment_token_check(user=user, token=code)
            if token is None:
                self._count_failure(user)
                raise forms.ValidationError(self.error_messages["token_wrong"], code="token_wrong")
            # The site keeps it in the session once Django has logged the user in.
            user.enrolment_token_id = token.pk
            return cleaned_data
        if not code:
            raise forms.ValidationError(self.error_messages["code_required"], code="code_required")
        try:
            device = second_factor.device_for_code(user, code)
        except ValidationFailed as error:  # throttled: nothing was checked, nothing counted
            raise forms.ValidationError(error.message, code="throttled") from None
        if device is None:
            self._count_failure(user)
            raise forms.ValidationError(self.error_messages["code_wrong"], code="code_wrong")
        # django-otp marks the session verified by this device when Django logs the user in.
        user.otp_device = device
        return cleaned_data

    def _count_failure(self, user) -> None:
        # A wrong code or token counts towards the username's lockout like a wrong password
        # (the password was right: guessing the second factor is what is left).
        user_login_failed.send(
            sender=__name__,
            credentials={"username": user.get_username()},
            request=self.request,
        )


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code from the app",
        max_length=8,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )


# --- Four eyes (docs/back-office.md) -----------------------------------------------------------
MAJOR_UNITS = re.compile(r"\d+(\.\d+)?")


def minor_units(text: str, currency: str, *, zero: bool = False) -> int:
    """`"10.50"` of EUR -> 1050: an amount typed in major units, read exactly (Decimal, never a
    float) to the currency's minor unit. Digits with at most one point and no more decimals
    than the currency has (`currency_exponent`: 2 for EUR, 0 for JPY, 3 for KWD); more than
    0 (or 0 itself with `zero`, a limit) and at most `MAX_AMOUNT` minor units. Raises
    `forms.ValidationError`."""
    text = (text or "").strip()
    exponent = currency_exponent(currency)
    if not MAJOR_UNITS.fullmatch(text):
        example = "10" if exponent == 0 else "10." + "5".ljust(exponent, "0")
        raise forms.ValidationError(
            f"An amount in {currency}, digits and a point only (e.g. {example})."
        )
    value = Decimal(text)
    if -value.as_tuple().exponent > exponent:
        raise forms.ValidationError(
            f"{currency} has {exponent} decimal place(s): at most {exponent} after the point."
        )
    amount = int(value.scaleb(exponent))
    if amount < 0 or (amount == 0 and not zero):
        raise forms.ValidationError("More than zero.")
    if amount > MAX_AMOUNT:
        raise forms.ValidationError(f"At most {money(MAX_AMOUNT, currency)}.")
    return amount


APPROVAL_REASON_HELP = "Why: kept on the request and written in the admin history."


class AdjustmentRequestForm(forms.Form):
    """An adjustment asked for on one account, in its currency (`currency`)."""

    direction = forms.ChoiceField(
        choices=[
            ("credit", "Load (credit: money into the account)"),
            ("debit", "Unload (debit: money out of the account)"),
        ],
        initial="credit",
    )
    amount = forms.CharField(max_length=32)
    description = forms.CharField(
        max_length=500,
        required=False,
        help_text="On the customer's statement line once approved.",
    )
    reason = reason_field(
        "Why (what was checked, the ticket): kept on the request for the approver and written "
        "in the admin history."
    )

    def __init__(self, *args, currency: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency
        self.fields["amount"].help_text = _amount_help(currency)

    def clean_amount(self) -> int:
        return minor_units(self.cleaned_data["amount"], self.currency)


def _amount_help(currency: str) -> str:
    exponent = currency_exponent(currency)
    if exponent == 2:
        return f"In {currency}, as people write it (e.g. 10.50): read exactly, to the cent."
    return f"In {currency}, as people write it ({exponent} decimal place(s)): read exactly."


class OverdraftLimitForm(forms.Form):
    """A new overdraft limit of one account, in its currency (`currency`)."""

    limit = forms.CharField(max_length=32, label="New overdraft limit")
    reason = reason_field(
        "Why (what was checked, the ticket): written in the admin history, and kept on the "
        "request when a second staff user must approve it."
    )

    def __init__(self, *args, currency: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency
        self.fields["limit"].help_text = _amount_help(currency) + " 0 for no overdraft."

    def clean_limit(self) -> int:
        return minor_units(self.cleaned_data["limit"], self.currency, zero=True)


CARD_LIMIT_LABELS = {
    "limit_per_transaction": "Per transaction",
    "limit_daily": "Daily",
    "limit_monthly": "Monthly",
    "limit_daily_cash": "Daily cash",
}


class CardLimitsForm(forms.Form):
    """A card's four limits, in its account's currency (`currency`), shown as they are now."""

    reason = reason_field(
        "Why (what was checked, the ticket): written in the admin history, and kept on the "
        "request when a second staff user must approve a raise."
    )

    def __init__(self, *args, card, currency: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.currency = currency
        limits = {}
        for field, label in CARD_LIMIT_LABELS.items():
            now = money(getattr(card, field), currency).removesuffix(f" {currency}")
            limits[field] = forms.CharField(
                max_length=32,
                label=label,
                initial=now.replace(",", ""),
                help_text=f"Now {money(getattr(card, field), currency)}.",
            )
        # The limits first, then the reason.
        self.fields = {**limits, "reason": self.fields["reason"]}

    def clean(self):
        data = super().clean()
        for field in CARD_LIMIT_LABELS:
            if field in data:
                try:
                    data[field] = minor_units(data[field], self.currency, zero=True)
                except forms.ValidationError as error:
                    self.add_error(field, error)
        return data

    def limits(self) -> dict:
        return {field: self.cleaned_data[field] for field in CARD_LIMIT_LABELS}


class CardProtectionForm(forms.Form):
    """A protective card action's reason code (one of `codes`, `Card.StatusReasonCode`) and its
    reason (`backoffice.actions.cards`: freeze, unfreeze, block)."""

    def __init__(self, *args, codes, help_text: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason_code"] = forms.ChoiceField(
            label="Reason code",
            choices=[(code.value, code.label.capitalize()) for code in codes],
            widget=forms.RadioSelect,
        )
        # Sent in the card.status_changed event to the institution: never a card number.
        self.fields["reason"] = reason_field(help_text)
        self.fields["reason"].validators.append(no_card_or_account_number)


class CaseNoteForm(forms.Form):
    """A note on a case (`backoffice.actions.cases`): required, at most `max_length`
    characters, never a card or account number (`core.text`)."""

    def __init__(self, *args, help_text: str, max_length: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["note"] = reason_field(help_text, max_length)
        self.fields["note"].validators.append(no_card_or_account_number)


NOBODY = "nobody"


class CaseAssignForm(forms.Form):
    """Whom to assign the selected cases to: one of `users` (those who may work on every one of
    them: `backoffice.selectors.possible_assignees`) or nobody; and an optional reason."""

    def __init__(self, *args, users: list, help_text: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.users = {str(user.pk): user for user in users}
        self.fields["assignee"] = forms.ChoiceField(
            label="Assign to",
            choices=[(pk, _user_name(user)) for pk, user in self.users.items()]
            + [(NOBODY, "Nobody (unassign)")],
        )
        self.fields["reason"] = reason_field(help_text)
        self.fields["reason"].required = False
        self.fields["reason"].validators.append(no_card_or_account_number)

    def clean_assignee(self):
        """The user, or None for nobody."""
        return self.users.get(self.cleaned_data["assignee"])


def _user_name(user) -> str:
    full = user.get_full_name()
    return f"{full} ({user.get_username()})" if full else user.get_username()


class ApprovalThresholdForm(forms.ModelForm):
    """A threshold: its amount typed in the currency's major units (a count of unblocks for a
    PIN unblock), read by `minor_units`."""

    up_to_text = forms.CharField(
        max_length=32,
        label="One staff user alone up to",
        help_text="An amount in the currency, as people write it (10000.00); for a PIN unblock, "
        "how many unblocks of a card in 30 days one user makes alone (0: always a second user).",
    )

    daily_up_to_text = forms.CharField(
        max_length=32,
        required=False,
        label="One staff user in 24 hours up to",
        help_text="Every account together: the sum of a user's adjustments or waived fees "
        "made alone (blank: the same as one change); for a PIN unblock, how many one user makes "
        "alone (blank: no daily count). Leave blank for limit raises (a limit is measured by "
        "the value it sets).",
    )

    class Meta:
        model = ApprovalThreshold
        fields = ["institution", "kind", "currency"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        threshold = self.instance
        if threshold.pk is not None:
            self.fields["up_to_text"].initial = _typed(threshold, threshold.up_to)
            if threshold.daily_up_to is not None:
                self.fields["daily_up_to_text"].initial = _typed(threshold, threshold.daily_up_to)
        if "currency" in self.fields:
            self.fields["currency"].help_text = "ISO 4217 (EUR); blank for a PIN unblock."
        if "kind" in self.fields:  # money placed from suspense always takes two people
            self.fields["kind"].choices = [
                (value, label)
                for value, label in self.fields["kind"].choices
                if value not in ALWAYS_ASKED
            ]

    def clean(self):
        data = super().clean()
        kind = data.get("kind", self.instance.kind)
        currency = (data.get("currency", self.instance.currency) or "").strip().upper()
        if "currency" in data:
            data["currency"] = currency
            self.instance.currency = currency
        text = (data.get("up_to_text") or "").strip()
        if not kind or "up_to_text" not in data:
            return data
        if kind == ApprovalRequest.Kind.PIN_UNBLOCK:
            if currency:
                self.add_error("currency", "A PIN unblock has no currency: leave it blank.")
        elif not re.fullmatch(r"[A-Z]{3}", currency):
            self.add_error("currency", "An ISO 4217 code, e.g. EUR.")
            return data
        try:
            data["up_to"] = _read(kind, currency, text)
        except forms.ValidationError as error:
            self.add_error("up_to_text", error)
        daily = (data.get("daily_up_to_text") or "").strip()
        data["daily_up_to"] = None
        if daily and kind in (
            ApprovalRequest.Kind.OVERDRAFT_RAISE,
            ApprovalRequest.Kind.CARD_LIMITS_RAISE,
        ):
            self.add_error("daily_up_to_text", "A limit raise has no daily total: leave it blank.")
        elif daily:
            try:
                data["daily_up_to"] = _read(kind, currency, daily)
            except forms.ValidationError as error:
                self.add_error("daily_up_to_text", error)
        return data


def _typed(threshold: ApprovalThreshold, value: int) -> str:
    """`value` of `threshold` as a person types it: a count of unblocks, or major units."""
    if threshold.kind == ApprovalRequest.Kind.PIN_UNBLOCK:
        return str(value)
    return money(value, threshold.currency).removesuffix(f" {threshold.currency}").replace(",", "")


def _read(kind: str, currency: str, text: str) -> int:
    """A threshold's amount as typed: a count of unblocks (0 to 1000) for a PIN unblock, else
    major units of `currency` (`minor_units`, zero allowed)."""
    if kind == ApprovalRequest.Kind.PIN_UNBLOCK:
        if not text.isdigit() or int(text) > 1000:
            raise forms.ValidationError("A whole number of unblocks, 0 to 1000.")
        return int(text)
    return minor_units(text, currency, zero=True)
