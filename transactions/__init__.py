"""Transactions: the statement-line endpoints (`GET .../transactions`), their selectors and admin.

The model and its writer belong to the accounts' ledger (`accounts.models.statement`,
`accounts.statement_lines`): the services that move money record the lines without looking up.
"""
