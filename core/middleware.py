"""The admin's actor: whatever a signed-in staff user changes names them (`core.actors`)."""

from core.actors import Actor, acting_as

ADMIN_PREFIX = "/admin/"


class StaffActorMiddleware:
    """Every /admin/ request of a signed-in staff user runs as that user (`core.actors`): the
    events written by whatever it changes (an action, a change form) name them. After
    `AuthenticationMiddleware`, which sets `request.user`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(ADMIN_PREFIX):
            user = request.user
            if user.is_authenticated and user.is_staff:
                with acting_as(Actor(user=user)):
                    return self.get_response(request)
        return self.get_response(request)
