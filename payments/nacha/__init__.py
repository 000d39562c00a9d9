"""NACHA files: the records, their layouts, the writer and the parser (docs/payments.md, "NACHA
files"). Pure Python: no Django, no database."""
