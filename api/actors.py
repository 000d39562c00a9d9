"""Who did something: an API key (through the API) or a staff user (admin, commands)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    api_key: object | None = None  # api.models.ApiKey
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

    def stamp(self, prefix: str) -> dict:
        """Field values recording this actor on a row: `{prefix}_api_key`, `{prefix}_user`."""
        return {f"{prefix}_api_key": self.api_key, f"{prefix}_user": self.user}


SYSTEM = Actor()
