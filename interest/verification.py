"""What `verify_ledger` checks of interest (docs/interest.md, "Verified"; registered with
`accounts.verification` when Django starts): each institution and currency's books hold the
sum of their accruals and adjustments (of back-valued money), their booked totals are those
rounded (within half a minor unit) and the sum of their bookings, and the interest payable and
receivable accounts hold what was booked (nothing is posted to customers yet: when posting
lands, payable is what is booked and not posted)."""

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

# Payable is credited what deposits earn, receivable debited what overdrafts owe.
ACCOUNTS = """
    SELECT a.institution_id, a.currency, a.internal_code, a.posted,
           COALESCE(CASE a.internal_code WHEN 'interest_payable' THEN b.deposit_booked
                                         ELSE -b.overdraft_booked END, 0) AS booked
      FROM accounts_account a
      LEFT JOIN interest_accrualbook b
             ON b.institution_id = a.institution_id AND b.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code IN ('interest_payable', 'interest_receivable')
       AND a.posted <> COALESCE(CASE a.internal_code WHEN 'interest_payable' THEN b.deposit_booked
                                                     ELSE -b.overdraft_booked END, 0)
"""

UNOWNED = """
    SELECT j.institution_id, j.id
      FROM accounts_journal j
      LEFT JOIN interest_interestbooking k ON k.journal_id = j.id
     WHERE j.kind = 'interest_accrual' AND k.id IS NULL
"""

CHECKS = {
    "interest books that are not the sum of their accruals and adjustments": ACCRUED,
    "interest books whose booked totals are more than half a minor unit from their accrued "
    "totals": ROUNDED,
    "interest books whose booked totals are not the sum of their bookings": BOOKED,
    "interest payable and receivable accounts that are not the interest booked": ACCOUNTS,
    "interest accrual journals that are no booking's": UNOWNED,
}
