"""Card secrets (`cards.secrets`) and the audited read of a card's PAN and CVV
(`card_sensitive_details`)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from stdnum import luhn

from cards.models import Card, SensitiveDetailsAccess
from cards.secrets import new_cvv, new_pan, pan_fingerprint, pin_hash, pin_matches
from cards.services import card_by_pan, card_sensitive_details
from core.actors import SYSTEM, Actor
from core.exceptions import CardNotActive, NotFound
from institutions import scopes as api_scopes
from tests.factories import issue_key

from .helpers import force_status, fresh_card, make_institution, new_card, refused

S = Card.Status


# --- cards.secrets (no database) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("bin_", "length"), [("400001", 16), ("40000300", 16), ("123456", 13), ("45678901", 19)]
)
def test_a_new_pan_has_the_bin_the_length_and_a_luhn_check_digit(bin_, length):
    pans = {new_pan(bin_, length) for _ in range(50)}
    assert len(pans) == 50
    for pan in pans:
        assert pan.startswith(bin_) and len(pan) == length
        assert pan.isdigit() and luhn.is_valid(pan)


def test_a_new_cvv_is_three_digits():
    cvvs = [new_cvv() for _ in range(2000)]
    assert all(len(cvv) == 3 and cvv.isdigit() for cvv in cvvs)
    assert len(set(cvvs)) > 500
    assert any(cvv.startswith("0") for cvv in cvvs)  # zero-padded, not 100..999


def test_the_pan_fingerprint_depends_on_the_key():
    pan = "4000012345678899"
    fingerprint = pan_fingerprint(pan)
    assert fingerprint == pan_fingerprint(pan)
    assert fingerprint != pan_fingerprint("4000012345678881")
    with override_settings(PAN_FINGERPRINT_KEY="another-key"):
        assert pan_fingerprint(pan) != fingerprint


def test_a_pin_hash_depends_on_the_key_and_the_salt():
    stored = pin_hash("1234")
    assert pin_matches(stored, "1234") and not pin_matches(stored, "4321")
    assert pin_hash("1234") != stored
    with override_settings(PIN_KEY="another-key"):
        assert not pin_matches(stored, "1234")


@pytest.mark.parametrize("name", ["PAN_FINGERPRINT_KEY", "PIN_KEY"])
def test_a_missing_key_is_a_configuration_error(name):
    with override_settings(**{name: ""}), pytest.raises(ImproperlyConfigured, match=name):
        pan_fingerprint("4000012345678899") if name == "PAN_FINGERPRINT_KEY" else pin_hash("1")


# --- Sensitive details --------------------------------------------------------------------------


@pytest.mark.django_db
def test_sensitive_details_give_the_pan_and_cvv_and_record_the_api_key():
    fi = make_institution()
    card = new_card(fi, status=S.ACTIVE)
    api_key, _ = issue_key(fi, scopes=api_scopes.ALL)
    details = card_sensitive_details(
        card=card, actor=Actor(api_key=api_key), request_id="req-1", client_ip="10.1.2.3"
    )
    stored = fresh_card(card)
    assert details == {
        "pan": stored.pan(),
        "cvv": stored.cvv(),
        "expiry_month": stored.expiry_month,
        "expiry_year": stored.expiry_year,
    }
    [access] = SensitiveDetailsAccess.objects.filter(card=card)
    assert (access.institution_id, access.api_key_id, access.user_id) == (fi.pk, api_key.pk, None)
    assert (access.request_id, access.client_ip) == ("req-1", "10.1.2.3")


@pytest.mark.django_db
def test_every_read_is_recorded_with_its_actor():
    card = new_card(make_institution())
    user = get_user_model().objects.create_user(username="ops", password="x")  # noqa: S106
    card_sensitive_details(card=card, actor=Actor(user=user))
    card_sensitive_details(card=card, actor=SYSTEM)
    accesses = SensitiveDetailsAccess.objects.filter(card=card).order_by("accessed_at")
    assert [(a.user_id, a.api_key_id) for a in accesses] == [(user.pk, None), (None, None)]


@pytest.mark.django_db
@pytest.mark.parametrize("status", [S.CLOSED, S.LOST, S.STOLEN, S.EXPIRED])
def test_no_sensitive_details_for_a_final_card(status):
    card = force_status(new_card(make_institution(), status=S.ACTIVE), status)
    with refused(CardNotActive) as excinfo:
        card_sensitive_details(card=card, actor=SYSTEM)
    assert excinfo.value.details == {"card_id": card.pk, "status": status}
    assert not SensitiveDetailsAccess.objects.exists()


@pytest.mark.django_db
def test_a_card_is_found_by_its_pan_in_its_institution_only():
    fi, other = make_institution(), make_institution()
    card = new_card(fi)
    assert card_by_pan(institution=fi, pan=card.pan(), actor=SYSTEM).pk == card.pk
    with pytest.raises(NotFound):
        card_by_pan(institution=other, pan=card.pan(), actor=SYSTEM)
    with pytest.raises(NotFound):
        card_by_pan(institution=fi, pan="4000020000000000", actor=SYSTEM)
