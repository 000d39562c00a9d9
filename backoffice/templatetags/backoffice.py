from django import template

from backoffice.dashboard import work_queues as queues_of

register = template.Library()


@register.simple_tag(takes_context=True)
def work_queues(context):
    return queues_of(context["request"])
