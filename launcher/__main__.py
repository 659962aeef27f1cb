"""``python -m launcher`` is the ``leaderboard-lab`` command."""

from launcher.demo import main

main()
