"""Participant accounts: people who sign up with a password, accounts hosts make through the host API
(``POST /api/v1/host/participants/``), and every account's API token."""
