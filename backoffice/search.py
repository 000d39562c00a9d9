"""One search box on every back-office page (issue 33 item 1; docs/back-office.md, "Search").

Staff find a caller from what they say on the phone. Each kind is read through its model's
registered admin: `get_queryset` keeps the user to the institutions they may work on, and a kind
the user may not view is not searched. What the box takes:

- an id of ours (`cus_…`, `acc_…`, `dsp_…`: any prefix): that object, whatever its kind;
- four digits: accounts by their number's last four and the customers holding them, cards by
  theirs, customers by their national id's last four;
- more digits (spaces and dashes ignored): an account number, whole, and its holders; a phone
  number; a card number, through its fingerprint (the number itself is never stored, shown or
  logged). A card number that matches no card the user may see counts as a miss in the API's
  guard against guessing (`backoffice.services.pan_guessing`): past the limit, the card-number
  branch stops for that user until the window passes, and the page says so (a group with a
  `notice` and no hits);
- an e-mail address: that customer's, in any case;
- words: customers named so (one word: either name; more: the first and the last word are the
  first and last names, in either order), cards embossed with exactly those words; whole names,
  in any case, not prefixes.

Every lookup reads one index (tests/backoffice/test_search.py reads the plans). The form posts:
an account or card number typed into it never reaches a URL or an access log.
"""

import re
from dataclasses import dataclass
from functools import cache

from django.contrib import admin
from django.db import models
from django.db.models import Q
from django.db.models.functions import Right
from django.urls import reverse
from stdnum import luhn

from accounts.models import Account
from backoffice.names import customer_detail
from backoffice.services.pan_guessing import staff_pan_miss_record, staff_pan_search_wait
from cards.models import Card
from cards.secrets import pan_fingerprint
from customers.models import Customer

LIMIT = 20  # hits per kind; more is said, not shown
ID_RE = re.compile(r"\A([a-z]{2,8})_[0-9A-Z]{26}\Z")
EMAIL_RE = re.compile(r"\A[^@\s]+@[^@\s]+\Z")
SEPARATORS = re.compile(r"[\s\-.]")
MIN_PAN, MAX_PAN = 12, 19


@dataclass(frozen=True)
class Hit:
    title: str
    detail: str
    url: str


@dataclass(frozen=True)
class Group:
    """The hits of one kind: at most LIMIT of them; `more` when there were others. `notice`:
    why this kind was not searched (no hits then)."""

    kind: str
    hits: list[Hit]
    more: bool
    notice: str = ""


def search(request, query: str) -> list[Group]:
    """The groups of hits for `query` (empty when it is blank or means nothing searchable)."""
    query = query.strip()
    if not query:
        return []
    if ID_RE.match(query):
        return _by_id(request, query)
    digits = SEPARATORS.sub("", query.removeprefix("+"))
    if digits.isdigit():
        return _by_digits(request, digits)
    if EMAIL_RE.match(query):
        return _groups(request, [(Customer, Q(email__iexact=query))])
    words = query.split()
    if len(words) == 1:
        named = Q(first_name__iexact=words[0]) | Q(last_name__iexact=words[0])
    else:
        first, last = words[0], words[-1]
        named = Q(first_name__iexact=first, last_name__iexact=last) | Q(
            first_name__iexact=last, last_name__iexact=first
        )
    return _groups(request, [(Customer, named), (Card, Q(embossed_name__iexact=" ".join(words)))])


def shown(query: str) -> str:
    """The query as the page may show it back: a number longer than four digits (an account
    or card number) only by its last four."""
    digits = SEPARATORS.sub("", query.strip().removeprefix("+"))
    if digits.isdigit() and len(digits) > 4:
        return f"…{digits[-4:]}"
    return query


def _by_digits(request, digits: str) -> list[Group]:
    if len(digits) == 4:
        numbered = Q(number_last4=digits)
        return _groups(
            request,
            [
                (Account, numbered),
                (Card, Q(pan_last4=digits)),
                (Customer, Q(national_id_last4=digits) | _holders(numbered)),
            ],
        )
    numbered = Q(number_last4=digits[-4:], account_number=digits)
    lookups = [
        (Account, numbered),
        (Customer, Q(phone=f"+{digits}") | _holders(numbered)),
    ]
    groups = _groups(request, lookups)
    if MIN_PAN <= len(digits) <= MAX_PAN and luhn.is_valid(digits):
        groups += _by_card_number(request, digits)
    return groups


def _by_card_number(request, pan: str) -> list[Group]:
    """The card holding `pan` among those the user may see; a miss counted against the user
    (the guard against guessing), and nothing looked up while they are over its limit."""
    model_admin = admin.site._registry.get(Card)
    if model_admin is None or not model_admin.has_view_permission(request):
        return []
    wait = staff_pan_search_wait(user=request.user)
    if wait:
        minutes = -(-wait // 60)
        return [
            Group(
                str(Card._meta.verbose_name_plural),
                [],
                False,
                notice="Card-number search is stopped for you: too many card numbers that match "
                f"no card. It is back in {minutes} minute{'s' if minutes != 1 else ''}; until "
                "then, find the card by its last four digits, its name or its customer.",
            )
        ]
    groups = _groups(request, [(Card, Q(pan_fingerprint=pan_fingerprint(pan)))])
    if not groups:
        staff_pan_miss_record(user=request.user)
    return groups


def _holders(numbered: Q) -> Q:
    """The customers holding the accounts `numbered` finds (holder or secondary holder): the
    caller gives their account number, staff want the caller."""
    accounts = Account.objects.alias(number_last4=Right("account_number", 4)).filter(numbered)
    return Q(pk__in=accounts.values("customer_id")) | Q(
        pk__in=accounts.exclude(secondary_customer=None).values("secondary_customer_id")
    )


def _by_id(request, query: str) -> list[Group]:
    prefix = ID_RE.match(query).group(1)
    return _groups(request, [(model, Q(pk=query)) for model in _models_of_prefix().get(prefix, [])])


def _groups(request, lookups: list[tuple[type[models.Model], Q]]) -> list[Group]:
    groups = []
    for model, condition in lookups:
        model_admin = admin.site._registry.get(model)
        if model_admin is None or not model_admin.has_view_permission(request):
            continue
        rows = model_admin.get_queryset(request)
        if model is Account:
            rows = rows.alias(number_last4=Right("account_number", 4))
        found = list(rows.filter(condition).order_by("-pk")[: LIMIT + 1])
        if found:
            hits = [_hit(model, row) for row in found[:LIMIT]]
            groups.append(Group(str(model._meta.verbose_name_plural), hits, len(found) > LIMIT))
    return groups


def _hit(model, row) -> Hit:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[row.pk])
    if model is Customer:
        # Two people of one name told apart (born, where, e-mail masked); never a national id.
        return Hit(f"{row.first_name} {row.last_name}", f"{customer_detail(row)} · {row.pk}", url)
    if model is Account:
        number = f"•••• {row.account_number[-4:]}" if row.account_number else "no number"
        return Hit(f"Account {number}", f"{row.pk} · {row.currency} · {row.status}", url)
    if model is Card:
        return Hit(row.masked_pan, f"{row.embossed_name} · {row.pk} · {row.status}", url)
    return Hit(str(row), f"{model._meta.verbose_name} {row.pk}", url)


@cache
def _models_of_prefix() -> dict[str, list[type[models.Model]]]:
    """Our models by the prefix of their ids (`new_id`'s), from the admin's registry: an id's
    prefix names its kind (core/ids.py)."""
    found: dict[str, list] = {}
    for model in admin.site._registry:
        pk = model._meta.pk
        if not isinstance(pk, models.CharField) or not callable(pk.default):
            continue
        example = pk.default()
        if isinstance(example, str) and ID_RE.match(example):
            found.setdefault(ID_RE.match(example).group(1), []).append(model)
    return found


def model_of_id(object_id: str) -> type[models.Model] | None:
    """The model an id of ours belongs to, by its prefix (`_models_of_prefix`), or None (not
    an id of ours, or a kind with no admin)."""
    matched = ID_RE.match(object_id or "")
    found = _models_of_prefix().get(matched.group(1), []) if matched else []
    return found[0] if len(found) == 1 else None
