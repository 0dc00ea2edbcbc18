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


def test_the_thread_context_is_replaced_after_context_uses_lowerings(monkeypatch):
    """An MLIR context interns every attribute it ever built; it is renewed periodically so
    a long-running process that keeps lowering new programs does not grow without bound."""
    from olympus_lower import context

    monkeypatch.setattr(context, "CONTEXT_USES", 3)
    context._per_thread.context = None
    first = [context.get_context() for _ in range(3)]
    assert first[0] is first[1] is first[2]
    fourth = context.get_context()
    assert fourth is not first[0]
