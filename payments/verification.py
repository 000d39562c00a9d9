"""What `verify_ledger` checks of payment orders and inbound entries (docs/payments.md, "Money";
registered with `accounts.verification` when Django starts): the rail's clearing account holds
exactly the credits in files not yet settled (a SEPA Instant order's money stays held on the
account while in flight, and passes through clearing in the transaction that settles it); its
settlement account the orders' credits settled less their debits settled (a returned or
rejected order's money came back: it counts in neither, but for what a returned credit's
return kept back, `returned_amount`), less the inbound credits applied or in
suspense, plus the inbound debits applied; its suspense account the inbound credits in suspense
and the returned credits of closed accounts; both, besides, what a reconciliation break's
resolution booked on them (journals of kind `reconciliation`: the bank's money the ledger had
not seen, docs/reconciliation.md "Breaks"); and every journal of the rails is an order's or an
inbound entry's (`RailJournal`)."""

CLEARING = """
    SELECT a.institution_id, a.currency, a.posted, COALESCE(o.total, 0)::bigint AS orders
      FROM accounts_account a
      LEFT JOIN (SELECT institution_id, currency, SUM(amount) AS total
                   FROM payments_paymentorder
                  WHERE direction = 'credit' AND status IN ('scheduled', 'sent')
                    -- SEPA Instant: held while in flight, through clearing in one go
                    AND rail <> 'sepa_inst'
                  GROUP BY institution_id, currency) o
             ON o.institution_id = a.institution_id AND o.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code = 'rail_clearing'
       AND a.posted <> COALESCE(o.total, 0)
"""

SETTLEMENT = """
    SELECT a.institution_id, a.currency, a.posted, COALESCE(o.total, 0)::bigint AS orders
      FROM accounts_account a
      LEFT JOIN (SELECT institution_id, currency, SUM(total) AS total
                   FROM (SELECT institution_id, currency,
                                CASE direction WHEN 'credit' THEN amount ELSE -amount END AS total
                           FROM payments_paymentorder
                          WHERE status = 'settled'
                         UNION ALL
                         -- a returned credit of which less came back: the rest was spent
                         SELECT institution_id, currency, amount - returned_amount
                           FROM payments_paymentorder
                          WHERE status = 'returned' AND direction = 'credit'
                            AND returned_amount IS NOT NULL
                         UNION ALL
                         SELECT institution_id, currency,
                                CASE direction WHEN 'credit' THEN -amount ELSE amount END
                           FROM payments_inboundentry
                          WHERE status = 'applied'
                             OR (status = 'suspense' AND direction = 'credit')
                         UNION ALL
                         -- a reconciliation break's money booked on it (docs/reconciliation.md)
                         SELECT j.institution_id, e.currency,
                                CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END
                           FROM accounts_entry e
                           JOIN accounts_journal j ON j.id = e.journal_id
                           JOIN accounts_account b ON b.id = e.account_id
                          WHERE j.kind = 'reconciliation' AND b.internal_code = 'rail_settlement'
                        ) moved
                  GROUP BY institution_id, currency) o
             ON o.institution_id = a.institution_id AND o.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code = 'rail_settlement'
       AND a.posted <> COALESCE(o.total, 0)
"""

SUSPENSE = """
    SELECT a.institution_id, a.currency, a.posted, COALESCE(i.total, 0)::bigint AS entries
      FROM accounts_account a
      LEFT JOIN (SELECT institution_id, currency, SUM(amount) AS total
                   FROM (SELECT institution_id, currency, amount
                           FROM payments_inboundentry
                          WHERE status = 'suspense'
                         UNION ALL
                         SELECT institution_id, currency, COALESCE(returned_amount, amount)
                           FROM payments_paymentorder
                          WHERE returned_to_suspense
                         UNION ALL
                         -- a reconciliation break's money booked on it (docs/reconciliation.md)
                         SELECT j.institution_id, e.currency,
                                CASE e.direction WHEN 'credit' THEN e.amount ELSE -e.amount END
                           FROM accounts_entry e
                           JOIN accounts_journal j ON j.id = e.journal_id
                           JOIN accounts_account b ON b.id = e.account_id
                          WHERE j.kind = 'reconciliation' AND b.internal_code = 'rail_suspense'
                        ) waiting
                  GROUP BY institution_id, currency) i
             ON i.institution_id = a.institution_id AND i.currency = a.currency
     WHERE a.kind = 'internal' AND a.internal_code = 'rail_suspense'
       AND a.posted <> COALESCE(i.total, 0)
"""

UNOWNED = """
    SELECT j.institution_id, j.id, j.kind
      FROM accounts_journal j
      LEFT JOIN payments_railjournal r ON r.journal_id = j.id
     WHERE j.kind IN ('payment_order', 'inbound_entry') AND r.id IS NULL
"""

CHECKS = {
    "rail clearing accounts that are not the credits in files not yet settled": CLEARING,
    "rail settlement accounts that are not the orders settled and the inbound entries "
    "applied": SETTLEMENT,  # (and the breaks' money booked)
    "rail suspense accounts that are not the inbound credits in suspense and the returned "
    "credits of closed accounts": SUSPENSE,
    "journals of the rails that are no order's or inbound entry's": UNOWNED,
}
