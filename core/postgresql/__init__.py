"""TX's PostgreSQL backend: Django's, with one change to what migrations create (`schema`)."""
