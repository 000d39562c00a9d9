"""The payments pages' tests exchange files through folders of their own."""

from tests.payments.conftest import rails_dir  # noqa: F401 (autouse: each test's folders)
