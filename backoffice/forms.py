"""The back office's forms: the sign-in form (the password, then the second factor's code:
`backoffice.second_factor`), and the four-eyes forms (an adjustment asked for, a reason for a
request or a decision: backoffice.services.approvals)."""

import re
from decimal import Decimal

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.signals import user_login_failed

from backoffice import second_factor
from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT, currency_exponent, money


class StaffLoginForm(AdminAuthenticationForm):
    otp_token = forms.CharField(
        label="Code",
        required=False,
        max_length=32,
        help_text="The 6 digits of your authenticator app, or one of your recovery codes. "
        "Leave empty at your first sign-in: you will set up the app next.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "none"}),
    )

    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "code_required": "Enter the code of your authenticator app or a recovery code.",
        "code_wrong": "That code is wrong or used up. Wait for the app's next code and try again.",
    }

    def clean(self):
        cleaned_data = super().clean()  # the password (axes counts a wrong one), staff only
        user = self.user_cache
        if user is None or not second_factor.has_second_factor(user):
            # First sign-in: the session reaches the enrolment page only (backoffice.sites).
            return cleaned_data
        code = cleaned_data.get("otp_token", "")
        if not code:
            raise forms.ValidationError(self.error_messages["code_required"], code="code_required")
        try:
            device = second_factor.device_for_code(user, code)
        except ValidationFailed as error:  # throttled: nothing was checked, nothing counted
            raise forms.ValidationError(error.message, code="throttled") from None
        if device is None:
            # A wrong code counts towards the username's lockout like a wrong password (the
            # password was right: guessing codes is what is left).
            user_login_failed.send(
                sender=__name__,
                credentials={"username": user.get_username()},
                request=self.request,
            )
            raise forms.ValidationError(self.error_messages["code_wrong"], code="code_wrong")
        # django-otp marks the session verified by this device when Django logs the user in.
        user.otp_device = device
        return cleaned_data


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code from the app",
        max_length=8,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )


# --- Four eyes (docs/back-office.md) -----------------------------------------------------------
MAX_REASON = 500
MAJOR_UNITS = re.compile(r"\d+(\.\d+)?")


def minor_units(text: str, currency: str) -> int:
    """`"10.50"` of EUR -> 1050: an amount typed in major units, read exactly (Decimal, never a
    float) to the currency's minor unit. Digits with at most one point and no more decimals
    than the currency has (`currency_exponent`: 2 for EUR, 0 for JPY, 3 for KWD); more than
    0 and at most `MAX_AMOUNT` minor units. Raises `forms.ValidationError`."""
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
    if amount <= 0:
        raise forms.ValidationError("More than zero.")
    if amount > MAX_AMOUNT:
        raise forms.ValidationError(f"At most {money(MAX_AMOUNT, currency)}.")
    return amount


def reason_field(help_text: str) -> forms.CharField:
    return forms.CharField(
        max_length=MAX_REASON,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=help_text,
    )


class ApprovalReasonForm(forms.Form):
    """The reason of a waiver asked for, or of a decision (approve, reject)."""

    reason = reason_field("Why: kept on the request and written in the admin history.")


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
        self.fields["amount"].help_text = (
            f"In {currency}, as people write it (e.g. 10.50): read exactly, to the cent."
            if currency_exponent(currency) == 2
            else f"In {currency}, as people write it ({currency_exponent(currency)} decimal "
            "place(s)): read exactly."
        )

    def clean_amount(self) -> int:
        return minor_units(self.cleaned_data["amount"], self.currency)
