"""The boundary between the apps holds in templates too: the archive's templates load no
tag library of overview (Python imports are checked by import-linter in `make lint`)."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
OVERVIEW_LIBRARIES = {p.stem for p in (TEMPLATES.parent / "overview" / "templatetags").glob("*.py")}


def test_the_archive_templates_load_no_overview_tags():
    loaded = {
        str(path.relative_to(TEMPLATES)): set(
            re.findall(r"{%\s*load\s+([^%]+)%}", path.read_text())
        )
        for path in (TEMPLATES / "packages").rglob("*.html")
    }
    offending = {
        name: libraries
        for name, libraries in loaded.items()
        if any(set(group.split()) & OVERVIEW_LIBRARIES for group in libraries)
    }
    assert loaded, "the archive's templates were not found"
    assert offending == {}
