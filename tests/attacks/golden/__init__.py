"""The golden grid: ``auto``'s outcomes on small seeded boards, recorded at a known commit (``record.py``), that
later code must match or beat (``tests/attacks/test_golden.py``)."""
