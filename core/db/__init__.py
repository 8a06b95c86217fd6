"""Database plumbing the hot paths need, with no domain rule: kept counts and the pages kept under
their stamps, precompiled queries, the timestamptz loader, the database errors that mean "try again", and
the PostgreSQL backend (docs/architecture.md#apps)."""
