"""`{% load money %}{{ fee.amount|money:fee.currency }}`: an amount in minor units as
`core.money.money` writes it ("27.50 EUR"), the one way the back office shows money
(docs/back-office.md, "Money and line states")."""

from django import template

from core.money import money as money_text

register = template.Library()


@register.filter
def money(amount, currency):
    return money_text(amount, currency)
