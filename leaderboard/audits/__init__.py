"""The host's leakage audit: the attack battery of :mod:`games.audit` run against a competition's own
configuration, as a Celery task with progress, stored per competition and shown to its host only."""
