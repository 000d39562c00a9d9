"""Staff accounts made the back office's way (`manage.py create_staff_user`, docs/back-office.md
"Signing in" and "Roles"): a staff user with a validated password, their role groups and the
institutions they work on (`institutions.InstitutionAccess`, or the permission to work on every
one), or a superuser; and a one-time enrolment token, without which the account can do nothing
(`backoffice.second_factor`)."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction as db_transaction

from backoffice.second_factor import PRINTED, IssuedToken, enrolment_token_issue
from core.exceptions import ValidationFailed
from institutions.models import InstitutionAccess

# The roles of docs/back-office.md (groups made by institutions/migrations/0003_staff_roles.py).
ROLES = ("support", "operations", "compliance")


@dataclass(frozen=True)
class CreatedStaffUser:
    user: object
    issued: IssuedToken


def staff_user_create(
    *,
    username: str,
    password: str,
    email: str = "",
    superuser: bool = False,
    roles: list[str] | tuple[str, ...] = (),
    institutions=(),
    all_institutions: bool = False,
    delivery: str = PRINTED,
) -> CreatedStaffUser:
    """A new staff user and their first enrolment token (`enrolment_token_issue`, `delivery`
    as there; the `StaffEvent` names no staff user as its author: an operator ran the command).

    Rules: the username is free; the password passes Django's validators (`AUTH_PASSWORD_
    VALIDATORS`, against this user's name and e-mail); the e-mail, if any, is an address. A
    superuser gets no role and no institution (they have every permission and see every
    institution). Anyone else gets at least one of `roles` (`support`, `operations`,
    `compliance`) and works on `institutions` (Institution objects) or, with
    `all_institutions`, on every one (the permission `work_on_all_institutions`), not both;
    with neither they see no institution's rows. Raises `ValidationFailed` naming what is
    wrong."""
    user_model = get_user_model()
    username = username.strip()
    email = email.strip()
    roles = list(dict.fromkeys(roles))
    institutions = list({institution.pk: institution for institution in institutions}.values())
    if not username:
        raise ValidationFailed("Give a username.")
    if user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).exists():
        raise ValidationFailed(f"A user {username!r} exists already.")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise ValidationFailed(f"{email!r} is not an e-mail address.") from None
    if superuser and (roles or institutions or all_institutions):
        raise ValidationFailed(
            "A superuser has every permission on every institution: give no role or institution."
        )
    if not superuser:
        unknown = [role for role in roles if role not in ROLES]
        if unknown or not roles:
            raise ValidationFailed(f"Give one or more roles among {', '.join(ROLES)}.")
        if institutions and all_institutions:
            raise ValidationFailed("Give institutions or every institution, not both.")
    user = user_model(username=username, email=email, is_staff=True, is_superuser=superuser)
    try:
        password_validation.validate_password(password, user)
    except ValidationError as error:
        raise ValidationFailed("The password is refused: " + " ".join(error.messages)) from None
    user.set_password(password)
    with db_transaction.atomic():
        user.save()
        if roles:
            groups = list(Group.objects.filter(name__in=roles))
            if len(groups) != len(roles):
                raise ValidationFailed(
                    "A role group is missing from the database (institutions migration 0003)."
                )
            user.groups.set(groups)
        InstitutionAccess.objects.bulk_create(
            InstitutionAccess(user=user, institution=institution) for institution in institutions
        )
        if all_institutions:
            user.user_permissions.add(
                Permission.objects.get(
                    content_type__app_label="institutions", codename="work_on_all_institutions"
                )
            )
        issued = enrolment_token_issue(
            user=user, by=None, via="create_staff_user", delivery=delivery
        )
    return CreatedStaffUser(user=user, issued=issued)
