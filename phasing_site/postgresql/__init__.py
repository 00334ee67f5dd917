"""PostgreSQL with a deadline the client keeps (`base.DatabaseWrapper`)."""
