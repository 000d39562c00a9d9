import pytest


@pytest.fixture(autouse=True)
def rails_dir(settings, tmp_path):
    """Each test's own outbox and inbox folders."""
    settings.RAILS_DIR = str(tmp_path / "rails")
    return tmp_path / "rails"
