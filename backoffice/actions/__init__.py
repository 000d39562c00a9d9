"""Every staff write of the back office, declared once (docs/back-office.md, "Staff actions").

One module per domain, as the pages' (`backoffice.admin`): each declares what staff may do to
that domain's rows (`base.StaffAction`: what it calls, its arguments, its reason, its four-eyes
policy, its confirmation, its words) and what its forms write. The pages list the declarations
in their admins' `actions`; nothing else in the back office writes (tests/test_imports.py).
"""
