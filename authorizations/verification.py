"""What `verify_ledger` checks of just-in-time funding (docs/decisioning.md, "Just-in-time
funding"; registered with `accounts.verification` when Django starts): what each program-funded
authorization's counters say the program funds is what the payment still needs, and what its
program-funding journals moved."""

# held now + presented - returned: what the payment still needs of its funding.
UNBALANCED = """
    SELECT a.id, a.program_funded, a.program_defunded, COALESCE(h.amount, 0) AS held,
           a.presented_amount, a.returned_amount
      FROM authorizations_authorization a
      LEFT JOIN accounts_hold h ON h.id = a.hold_id AND h.status = 'active'
     WHERE a.program_mode = 'jit' AND a.decided_by = 'program' AND a.decision = 'approved'
       AND a.program_funded - a.program_defunded
           <> COALESCE(h.amount, 0) + COALESCE(a.presented_amount, 0) - a.returned_amount
"""

# The counters against the ledger: the program-funding journals of the authorization's lines,
# as they moved the cardholder's account.
UNPOSTED = """
    SELECT COALESCE(a.id, m.authorization_id), a.program_funded - a.program_defunded,
           COALESCE(m.moved, 0)::bigint
      FROM (SELECT id, program_funded, program_defunded FROM authorizations_authorization
             WHERE program_funded > 0) a
      FULL JOIN (SELECT l.authorization_id,
                        SUM(CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END)
                            AS moved
                   FROM transactions_transaction l
                   JOIN accounts_journal j ON j.id = l.journal_id AND j.kind = 'program_funding'
                   JOIN accounts_entry e ON e.journal_id = j.id AND e.account_id = l.account_id
                  WHERE l.authorization_id IS NOT NULL
                  GROUP BY l.authorization_id) m ON m.authorization_id = a.id
     WHERE COALESCE(a.program_funded - a.program_defunded, 0) <> COALESCE(m.moved, 0)
"""

CHECKS = {
    "program-funded authorizations whose funding is not what they still need": UNBALANCED,
    "program-funded authorizations whose funding is not what their journals moved": UNPOSTED,
}
