"""A cardholder's disputes of card payments (docs/disputes.md): `filing` (a draft, its
evidence), `stages` (the issuer's moves and the network's answers), `money` (each step's
journal)."""
