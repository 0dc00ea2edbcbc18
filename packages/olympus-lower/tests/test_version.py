import re
from pathlib import Path

from olympus_lower import __version__

ABOUT = Path(__file__).resolve().parent.parent / "src" / "olympus_lower" / "__about__.py"


def test_version_is_x_y_z():
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__


def test_version_matches_about_file():
    match = re.search(r'^__version__ = "([^"]+)"$', ABOUT.read_text(encoding="utf-8"), re.M)
    assert match is not None, f"no __version__ line in {ABOUT}"
    assert __version__ == match.group(1)
