"""``python -m games run GAMEFILE --out DIR``."""

from __future__ import annotations

from games.cli import main

raise SystemExit(main())
