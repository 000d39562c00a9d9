import pytest
from tests.own_database import just_before, made_at, migrate


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("own_database")
def test_probe():
    t = just_before(("accounts", "0016_balance_after"))
    print(t)
    apps = made_at(t)
    for m in ["institutions.Institution", "customers.Customer", "accounts.AccountProduct", "accounts.Account", "accounts.Journal", "accounts.Entry", "accounts.Hold"]:
        try:
            M = apps.get_model(m)
        except LookupError as e:
            print(m, "missing", e); continue
        print(m, M._meta.db_table, [(f.name, f.get_internal_type(), f.null, f.has_default()) for f in M._meta.concrete_fields])
    t2 = just_before(("accounts", "0023_hold_changes"))
    apps = migrate(t2).apps
    M = apps.get_model("accounts.Hold")
    print("HOLD@0022", [(f.name, f.get_internal_type(), f.null, f.has_default()) for f in M._meta.concrete_fields])
