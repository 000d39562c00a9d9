"""Transactions: the statement-line endpoints (`GET .../transactions`, the statements), their
selectors and admin.

The model (`accounts.models.StatementLine`) and the package that writes and reads its lines
(`accounts.statement_lines`) belong to the accounts' ledger: the services that move money record
the lines without looking up.
"""
