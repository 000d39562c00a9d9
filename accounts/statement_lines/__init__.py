"""Statement lines (`accounts.models.StatementLine`, "transactions" in the spec and the API): the
one package that writes and reads them.

- `record`: the services that move money build an account's lines with the money
  (`statement_lines_new`, written by `accounts.posting.post` with the posting) or write them on
  their own (`statement_lines_record`), in the operation's transaction.
- `periods`: the lines of a period of the institution's calendar and the statement built on them
  (balances at its ends, totals; `period_lines`, `statement_build`, paging and streaming), which
  the statement endpoints render (`transactions.statement_views`).

The listing of an account's or a card's lines (`GET .../transactions`) reads through
`transactions.selectors`.
"""

from .record import Line, statement_lines_new, statement_lines_record

__all__ = ["Line", "statement_lines_new", "statement_lines_record"]
