"""Where the project is and where a running Phasing keeps its files (the embedded
database, broker folder, cache, mail and beat schedule): PHASING_VAR_DIR, var/ by default."""

from __future__ import annotations

from pathlib import Path

from phasing_site.env import env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PHASING_VAR_DIR", str(BASE_DIR / "var")))
