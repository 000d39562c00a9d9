"""ISO 20022 files: the SEPA messages TX writes and reads, on the official XSDs kept in
`schemas/` (docs/payments.md, "ISO 20022 files"). Pure Python on lxml: no Django, no database."""
