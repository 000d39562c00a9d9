"""What `verify_ledger` checks of interest (docs/interest.md, "Verified"; registered with
`accounts.verification` when Django starts): each institution and currency's books hold the
sum of their accruals and adjustments (of back-valued money), their booked totals are those
rounded (within half a minor unit) and the sum of their bookings, the interest payable and
receivable accounts hold what was booked and not yet posted; each posting is its period's
accruals plus the residue carried in, less the residue carried out, and its journal moves that
(docs/interest.md, "Posting")."""

ACCRUED = """
    SELECT b.institution_id, b.currency, b.deposit_accrued, b.overdraft_accrued,
           COALESCE(a.deposit, 0) AS deposit_rows, COALESCE(a.overdraft, 0) AS overdraft_rows
      FROM interest_accrualbook b
      LEFT JOIN (SELECT r.institution_id, k.currency,
                        SUM(r.amount) FILTER (WHERE r.kind = 'deposit') AS deposit,
                        SUM(r.amount) FILTER (WHERE r.kind = 'overdraft') AS overdraft
                   FROM (SELECT institution_id, booking_id, kind, accrual AS amount
                           FROM interest_interestaccrual
                         UNION ALL
                         SELECT institution_id, booking_id, kind, difference
                           FROM interest_interestadjustment) r
                   JOIN interest_interestbooking k ON k.id = r.booking_id
                  GROUP BY r.institution_id, k.currency) a
             ON a.institution_id = b.institution_id AND a.currency = b.currency
     WHERE b.deposit_accrued <> COALESCE(a.deposit, 0)
        OR b.overdraft_accrued <> COALESCE(a.overdraft, 0)
"""

ROUNDED = """
    SELECT institution_id, currency, deposit_accrued, deposit_booked, overdraft_accrued,
           overdraft_booked
      FROM interest_accrualbook
     WHERE abs(deposit_booked - deposit_accrued) > 0.5
        OR abs(overdraft_booked - overdraft_accrued) > 0.5
"""

BOOKED = """
    SELECT b.institution_id, b.currency, b.deposit_booked, b.overdraft_booked,
           COALESCE(k.deposit, 0)::bigint AS deposit_bookings,
           COALESCE(k.overdraft, 0)::bigint AS overdraft_bookings
      FROM interest_accrualbook b
      LEFT JOIN (SELECT institution_id, currency, SUM(deposit_amount) AS deposit,
                        SUM(overdraft_amount) AS overdraft
                   FROM interest_interestbooking GROUP BY institution_id, currency) k
             ON k.institution_id = b.institution_id AND k.currency = b.currency
     WHERE b.deposit_booked <> COALESCE(k.deposit, 0)
        OR b.overdraft_booked <> COALESCE(k.overdraft, 0)
"""

# Payable is credited what deposits earn and debited what is posted to the customers;
# receivable debited what overdrafts owe and credited what is posted; the withholding tax
# account credited the tax withheld.
ACCOUNTS = """
    SELECT a.institution_id, a.currency, a.internal_code, a.posted, e.expected
      FROM accounts_account a
      LEFT JOIN interest_accrualbook b
             ON b.institution_id = a.institution_id AND b.currency = a.currency
      LEFT JOIN (SELECT p.institution_id, c.currency,
                        SUM(p.amount) FILTER (WHERE p.kind = 'deposit') AS deposit,
                        SUM(p.amount) FILTER (WHERE p.kind = 'overdraft') AS overdraft,
                        SUM(p.withholding_tax) AS tax
                   FROM interest_interestposting p
                   JOIN accounts_account c ON c.id = p.account_id
                  GROUP BY p.institution_id, c.currency) s
             ON s.institution_id = a.institution_id AND s.currency = a.currency
      CROSS JOIN LATERAL (
            SELECT CASE a.internal_code
                   WHEN 'interest_payable'
                        THEN COALESCE(b.deposit_booked, 0) - COALESCE(s.deposit, 0)
                   WHEN 'interest_receivable'
                        THEN COALESCE(s.overdraft, 0) - COALESCE(b.overdraft_booked, 0)
                   ELSE COALESCE(s.tax, 0) END AS expected) e
     WHERE a.kind = 'internal'
       AND a.internal_code IN ('interest_payable', 'interest_receivable',
                               'interest_withholding_tax')
       AND a.posted <> e.expected
"""

UNOWNED = """
    SELECT j.institution_id, j.id
      FROM accounts_journal j
      LEFT JOIN interest_interestbooking k ON k.journal_id = j.id
     WHERE j.kind = 'interest_accrual' AND k.id IS NULL
"""


# A posting's `accrued` is its account's accruals of the kind over its days, plus the
# adjustments of back-valued money found on them (interest.selectors.period_accruals).
POSTED_ACCRUALS = """
    SELECT p.id, p.account_id, p.kind, p.accrued, r.accruals + d.adjustments AS postable
      FROM interest_interestposting p
      CROSS JOIN LATERAL (SELECT COALESCE(SUM(accrual), 0) AS accruals
                            FROM interest_interestaccrual
                           WHERE account_id = p.account_id AND kind = p.kind
                             AND day BETWEEN p.first_day AND p.last_day) r
      CROSS JOIN LATERAL (SELECT COALESCE(SUM(difference), 0) AS adjustments
                            FROM interest_interestadjustment
                           WHERE account_id = p.account_id AND kind = p.kind
                             AND found_on BETWEEN p.first_day AND p.last_day) d
     WHERE p.accrued <> r.accruals + d.adjustments
"""

# accrued + carried in = posted + carried out; what is carried in is what the account's last
# posting of the kind carried out; the residue is within the rounding's bound.
POSTED_RESIDUE = """
    SELECT id, account_id, kind, last_day, accrued, carried_in, amount, carried_out, previous
      FROM (SELECT p.*, t.rounding,
                   COALESCE(LAG(p.carried_out) OVER (PARTITION BY p.account_id, p.kind
                                                    ORDER BY p.last_day), 0) AS previous
              FROM interest_interestposting p
              JOIN interest_interestterms t ON t.id = p.terms_id) p
     WHERE accrued + carried_in <> amount + carried_out
        OR carried_in <> previous
        OR (rounding = 'down' AND abs(carried_out) >= 1)
        OR (rounding <> 'down' AND abs(carried_out) > 0.5)
"""

# What an interest posting journal moves on the customer's account is its postings' net.
POSTED_JOURNALS = """
    SELECT j.institution_id, j.id, e.net AS entries, p.net AS postings
      FROM accounts_journal j
      LEFT JOIN (SELECT journal_id,
                        SUM(CASE kind WHEN 'deposit' THEN amount - withholding_tax
                                      ELSE -amount END) AS net
                   FROM interest_interestposting WHERE journal_id IS NOT NULL
                  GROUP BY journal_id) p ON p.journal_id = j.id
      LEFT JOIN (SELECT n.journal_id,
                        SUM(CASE n.direction WHEN 'credit' THEN n.amount ELSE -n.amount END) AS net
                   FROM accounts_entry n
                   JOIN accounts_journal k ON k.id = n.journal_id AND k.kind = 'interest_posting'
                   JOIN accounts_account c ON c.id = n.account_id AND c.kind = 'customer'
                  GROUP BY n.journal_id) e ON e.journal_id = j.id
     WHERE j.kind = 'interest_posting'
       AND (p.journal_id IS NULL OR COALESCE(e.net, 0) <> p.net)
"""

CHECKS = {
    "interest books that are not the sum of their accruals and adjustments": ACCRUED,
    "interest books whose booked totals are more than half a minor unit from their accrued "
    "totals": ROUNDED,
    "interest books whose booked totals are not the sum of their bookings": BOOKED,
    "interest payable, receivable and withholding tax accounts that are not the interest "
    "booked and not posted, and the tax withheld": ACCOUNTS,
    "interest accrual journals that are no booking's": UNOWNED,
    "interest postings that are not their period's accruals and adjustments": POSTED_ACCRUALS,
    "interest postings that are not their accruals plus the residue carried, or carry a "
    "residue past their rounding": POSTED_RESIDUE,
    "interest posting journals that are not their postings' amounts": POSTED_JOURNALS,
}
