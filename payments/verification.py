"""What `verify_ledger` checks of payment orders (docs/payments.md, "Money"; registered with
`accounts.verification` when Django starts): the rail's clearing account holds exactly the
credits in files not yet settled, and its settlement account the credits settled less the
debits settled (a returned or rejected order's money came back: it counts in neither)."""

CLEARING = """
    SELECT a.institution_id, a.currency, a.posted, COALESCE(o.total, 0)::bigint AS orders
      FROM accounts_account a
      LEFT JOIN (SELECT institution_id, currency, SUM(amount) AS total
                   FROM payments_paymentorder
                  WHERE direction = 'credit' AND status IN ('scheduled', 'sent')
                  GROUP BY institution_id, currency) o
             ON o.institution_id = a.institution_id AND o.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code = 'rail_clearing'
       AND a.posted <> COALESCE(o.total, 0)
"""

SETTLEMENT = """
    SELECT a.institution_id, a.currency, a.posted, COALESCE(o.total, 0)::bigint AS orders
      FROM accounts_account a
      LEFT JOIN (SELECT institution_id, currency,
                        SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END) AS total
                   FROM payments_paymentorder
                  WHERE status = 'settled'
                  GROUP BY institution_id, currency) o
             ON o.institution_id = a.institution_id AND o.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code = 'rail_settlement'
       AND a.posted <> COALESCE(o.total, 0)
"""

CHECKS = {
    "rail clearing accounts that are not the credits in files not yet settled": CLEARING,
    "rail settlement accounts that are not the orders settled": SETTLEMENT,
}
