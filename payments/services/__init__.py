"""Every write of payments: external accounts, payment orders, their cut-offs, settlement,
returns and the files of the rails (see each module)."""
