"""The ``leaderboard-lab`` command: start the one-machine stack (``stack``) and run the demo on it."""
