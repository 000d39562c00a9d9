"""The client address django-axes counts failed admin logins by (`AXES_CLIENT_IP_CALLABLE`).

The same address the API's allowlists and limits use (`api.client_ip`): the socket peer, or the
right-most X-Forwarded-For hop when the peer is one of TRUSTED_PROXIES. A client cannot dodge
the lockout by writing its own X-Forwarded-For.
"""

from api.client_ip import client_address


def axes_client_ip(request) -> str:
    """The client's address as text. When a trusted proxy's header names no address, the
    proxy's own (the peer) is counted: stricter, never looser."""
    address = client_address(request)
    if address is None:
        return request.META.get("REMOTE_ADDR", "")
    return str(address)
