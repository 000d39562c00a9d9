"""The back office's sign-in form: the password, then the second factor's code
(`backoffice.second_factor`)."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.signals import user_login_failed

from backoffice import second_factor
from core.exceptions import ValidationFailed


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
