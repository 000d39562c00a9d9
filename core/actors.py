"""Who did something: an API key (through the API), a staff user (the admin), or the system
(periodic jobs, management commands).

The current actor: each entry point says who acts for the code it runs (`acting_as`), and
`events.services.emit` records it on every event, so no service has to pass it along or guess.
`TXView` sets the request's API key for the whole request, `core.middleware.StaffActorMiddleware`
the staff user for every /admin/ request. Nothing sets it for jobs and commands: when nothing
is set the actor is `SYSTEM`, and only they may rely on that default
(tests/events/test_actor.py checks that every API write and admin action names its actor).
"""

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    api_key: object | None = None  # institutions.models.ApiKey
    user: object | None = None  # settings.AUTH_USER_MODEL

    @classmethod
    def of_request(cls, request) -> "Actor":
        auth = getattr(request, "auth", None)
        if auth is not None:
            return cls(api_key=auth)
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            return cls(user=user)
        return cls()

    @property
    def type(self) -> str:
        """`apiKey`, `staff` or `system`, as events show it."""
        if self.api_key is not None:
            return "apiKey"
        if self.user is not None:
            return "staff"
        return "system"

    @property
    def id(self) -> str | None:
        """The API key's id, the staff user's id (a string), None for the system."""
        if self.api_key is not None:
            return str(self.api_key.pk)
        if self.user is not None:
            return str(self.user.pk)
        return None

    def stamp(self, prefix: str) -> dict:
        """Field values recording this actor on a row: `{prefix}_api_key`, `{prefix}_user`."""
        return {f"{prefix}_api_key": self.api_key, f"{prefix}_user": self.user}


SYSTEM = Actor()


# Per thread and per asyncio task: DRF runs each request in one thread, start to end.
_current: contextvars.ContextVar[Actor] = contextvars.ContextVar("tx_actor", default=SYSTEM)


def current_actor() -> Actor:
    """Who the running code acts for: set by its entry point, else `SYSTEM` (jobs, commands)."""
    return _current.get()


@contextmanager
def acting_as(actor: Actor) -> Iterator[Actor]:
    """Run the block as `actor`; the previous actor is back afterwards, whatever happens."""
    token = _current.set(actor)
    try:
        yield actor
    finally:
        _current.reset(token)


def actor_enter(actor: Actor) -> contextvars.Token:
    """`acting_as` for an entry point that cannot wrap its work in a `with` block (TXView sets
    it in `initial` and ends it in `dispatch`): hand the token back to `actor_exit`."""
    return _current.set(actor)


def actor_exit(token: contextvars.Token) -> None:
    _current.reset(token)
