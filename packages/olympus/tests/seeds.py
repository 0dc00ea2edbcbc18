"""Locate the specification pages in ../shared/seeds (beside the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SEEDS = REPO.parent / "shared" / "seeds"
AOT_PAGE = SEEDS / "000_a90ea17c62ed62dd.txt"
JIT_PAGE = SEEDS / "001_d90df0a6e7a84ee5.txt"


def seed_text(path: Path) -> str:
    if not path.is_file():
        pytest.skip(f"specification page {path} is absent (../shared/seeds is not beside the "
                    "repository)")
    return path.read_text(encoding="utf-8")
