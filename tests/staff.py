"""Staff sessions for the tests: the back office needs a second factor on every page
(backoffice.sites), so a test signs staff in through `sign_in`, never `force_login` alone.

`sign_in` does what a sign-in with the app's code ends in (django-otp marks the session
verified by the user's confirmed authenticator app) without going through the form, as
`force_login` skips the password; the form itself is tested in
tests/backoffice/test_second_factor.py, which signs in with `app_code`.
"""

from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import TOTP

from backoffice.models import AppDevice


def app_device(user) -> AppDevice:
    """The user's confirmed authenticator app, enrolled now when they have none (as if they had
    enrolled with a token: tests/backoffice/test_second_factor.py tests that way)."""
    device = AppDevice.objects.filter(user=user, confirmed=True).first()
    if device is None:
        device = AppDevice.create(user=user, confirmed=True)
    return device


def app_code(device: AppDevice, *, key: bytes | None = None) -> str:
    """The code the user's app shows now, as a phone would compute it from the device's key (or
    from `key`, a key copied elsewhere). A code is accepted once (the device keeps the last time
    step used): when this step's code was used, the next step's (within the device's tolerance
    of one step) is given."""
    device.refresh_from_db()
    totp = TOTP(key or device.bin_key, device.step, device.t0, device.digits, device.drift)
    ahead = max(0, device.last_t + 1 - totp.t())
    assert ahead <= device.tolerance, "a third code within one 30-second step: none is left"
    totp.drift = device.drift + ahead
    return f"{totp.token():0{device.digits}d}"


def sign_in(client, user) -> AppDevice:
    """`client` signed in as `user` with their second factor verified (a device is enrolled
    for them if they have none)."""
    device = app_device(user)
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return device
