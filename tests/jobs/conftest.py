import pytest

from .workers import Workers, clear_jobs


@pytest.fixture(autouse=True)
def no_jobs(request, django_db_setup, django_db_blocker):
    """Procrastinate's tables start empty (Django's flush leaves them alone); after a test that
    commits, they are emptied again for whoever comes next."""
    with django_db_blocker.unblock():
        clear_jobs()
    yield
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        with django_db_blocker.unblock():
            clear_jobs()


@pytest.fixture
def workers():
    """Start real workers on the test database (`workers.start(...)`, see workers.py); every
    one of them is killed when the test ends."""
    with Workers() as started:
        yield started
