"""Production settings but for the URLconf: `bench.floor`, the service's routes plus the floor's
one (`bench/transfers.py --floor`; bench/floor.py). Never a setting for a deployment."""

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "bench.floor"
