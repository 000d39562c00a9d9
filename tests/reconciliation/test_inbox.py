"""The bank's statements dropped in the rails' inbox (docs/reconciliation.md, "From the inbox"):
read as statements, not as rail files, beside the rail files of the same folder; one that is not
valid is kept as a refused rail file, as a rail file is; read again, nothing changes."""

import pytest
from django.utils import timezone

from payments.connector import collect, folder
from payments.models import RailFile
from reconciliation.models import BankStatement
from tests.factories import InstitutionFactory
from tests.payments.helpers import ach_profile, unknown_return_file
from tests.reconciliation.test_statements import DAY

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def rails_dir(settings, tmp_path):
    settings.RAILS_DIR = str(tmp_path / "rails")


def drop(institution, family: str, name: str, content: bytes):
    (folder(institution.pk, family, "inbox") / name).write_bytes(content)


def test_statements_in_the_inbox_are_read_as_statements_beside_the_rail_files():
    institution = InstitutionFactory()
    returns = unknown_return_file(ach_profile(institution), timezone.localdate())
    drop(institution, "ach", "returns.ach", returns)
    drop(institution, "ach", "day.mt940", DAY["mt940"])
    drop(institution, "ach", "day.bai2", DAY["bai2"])
    drop(institution, "sepa", "day.camt053.xml", DAY["camt.053"])

    received = collect(institution) + collect(institution, "sepa")

    assert [rail_file.name for rail_file in received] == ["returns.ach"]
    assert received[0].status == RailFile.Status.APPLIED
    statements = BankStatement.objects.filter(institution=institution)
    assert sorted(statements.values_list("format", "name")) == [
        ("bai2", "day.bai2"),
        ("camt.053", "day.camt053.xml"),
        ("mt940", "day.mt940"),
    ]
    assert len({s.line_count for s in statements}) == 1  # the same day's lines
    inbox = folder(institution.pk, "ach", "inbox")
    assert [p.name for p in inbox.iterdir() if p.is_file()] == []
    assert sorted(p.name for p in (inbox / "read").iterdir()) == [
        "day.bai2",
        "day.mt940",
        "returns.ach",
    ]


def test_the_same_statement_again_in_the_inbox_is_the_same_statement():
    institution = InstitutionFactory()
    drop(institution, "ach", "day.mt940", DAY["mt940"])
    collect(institution)
    drop(institution, "ach", "again.mt940", DAY["mt940"])
    collect(institution)

    assert BankStatement.objects.filter(institution=institution).count() == 1
    assert not RailFile.objects.filter(institution=institution).exists()


def test_a_statement_not_valid_is_kept_refused_as_a_rail_file_is():
    institution = InstitutionFactory()
    bad = DAY["bai2"].replace(b"49,250000", b"49,250001")  # the totals do not add up
    drop(institution, "ach", "bad.bai2", bad)

    assert collect(institution) == []

    assert not BankStatement.objects.filter(institution=institution).exists()
    kept = RailFile.objects.get(institution=institution)
    assert kept.status == RailFile.Status.REFUSED
    assert kept.name == "bad.bai2"
    assert bytes(kept.content) == bad
    assert kept.error.startswith("a bank statement, not valid: ")
    assert (folder(institution.pk, "ach", "inbox") / "read" / "bad.bai2").exists()

    drop(institution, "ach", "bad-again.bai2", bad)  # read again: the file as it was
    collect(institution)
    assert RailFile.objects.filter(institution=institution).count() == 1
