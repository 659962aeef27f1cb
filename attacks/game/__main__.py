"""``python -m attacks.game run GAMEFILE --out DIR``."""

from __future__ import annotations

from attacks.game.cli import main

raise SystemExit(main())
