"""Participant accounts hosts make through the host API (``POST /api/v1/host/participants/``)."""
