"""Each production process says, at its first connection, when its primary replicates
asynchronously (core.postgresql.replication; docs/deployment.md, "When the primary goes
away")."""

import logging

import pytest
from django.db import connection
from django.db.backends.signals import connection_created

from core.postgresql import replication


@pytest.mark.parametrize(
    ("standby_names", "synchronous_commit", "standbys", "mode"),
    [
        ("", "on", 0, "none"),  # a single node: nothing to say
        ("", "on", 2, "asynchronous"),
        ('"node2"', "on", 2, "synchronous"),  # Patroni's synchronous_mode
        ("ANY 1 (node2, node3)", "remote_apply", 2, "synchronous"),
        ('"node2"', "remote_write", 1, "synchronous"),
        ('"node2"', "local", 2, "asynchronous"),  # commits do not wait for the standby
        ('"node2"', "off", 2, "asynchronous"),
        ('"node2"', "on", 0, "synchronous"),  # commits wait (strict mode: for a standby)
        ("  ", "on", 1, "asynchronous"),
    ],
)
def test_the_mode(standby_names, synchronous_commit, standbys, mode):
    assert replication.replication_mode(standby_names, synchronous_commit, standbys) == mode


@pytest.mark.django_db
def test_it_reads_the_server():
    found = replication.replication_read(connection)
    # The test server: no synchronous standby (a test of tests/api/test_replicas.py may be
    # streaming from it meanwhile, asynchronously).
    assert found["synchronous_standby_names"] == ""
    assert found["synchronous_commit"] == "on"
    assert found["mode"] == ("asynchronous" if found["standbys"] else "none")


def test_it_listens_to_new_connections():
    assert any(key[0] == "core.replication_check" for key, *_ in connection_created.receivers)


ASYNCHRONOUS = {
    "mode": "asynchronous",
    "synchronous_standby_names": "",
    "synchronous_commit": "on",
    "standbys": 2,
}


@pytest.fixture
def first_connection(monkeypatch, settings):
    """As at a production process's first connection."""
    settings.DATABASE_REPLICATION_CHECK = True
    monkeypatch.setattr(replication, "_checked", False)
    reads = []

    def read(wrapper):
        reads.append(wrapper.alias)
        return ASYNCHRONOUS

    monkeypatch.setattr(replication, "replication_read", read)
    return reads


def test_asynchronous_replication_is_an_error_in_the_log_once(first_connection, caplog):
    caplog.set_level(logging.INFO, logger="tx.database")
    replication.replication_check(sender=None, connection=connection)
    replication.replication_check(sender=None, connection=connection)  # a later connection

    assert first_connection == ["default"]
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage().startswith("asynchronous replication: a failover loses")
    assert record.replication == ASYNCHRONOUS


def test_off_or_on_another_alias_nothing_is_read(first_connection, settings):
    class Replica:
        alias = "replica_1"

    replication.replication_check(sender=None, connection=Replica())
    settings.DATABASE_REPLICATION_CHECK = False
    replication.replication_check(sender=None, connection=connection)
    assert first_connection == []
