"""The benchmark scripts' one section writer replaces its own section and keeps the others."""

from __future__ import annotations

from pathlib import Path

from tests.bench_support import write_section

DOCS = "# Benchmarks\n\n## Engine\n\nold engine\n\n## Load\n\nold load\n"


def test_a_section_is_replaced_in_place_and_the_others_kept(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text(DOCS)
    write_section(docs, "## Engine\n\nnew engine\n")
    assert docs.read_text() == "# Benchmarks\n\n## Engine\n\nnew engine\n\n## Load\n\nold load\n"
    write_section(docs, "## Load\n\nnew load")  # the last section, no trailing newline
    assert docs.read_text().endswith("## Load\n\nnew load\n")
    assert "new engine" in docs.read_text()


def test_a_new_section_is_appended_and_a_missing_file_started(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    write_section(docs, "## Log redaction\n\ntable\n")
    assert docs.read_text() == "# Benchmarks\n\n## Log redaction\n\ntable\n"
    write_section(docs, "## Engine\n\nfast\n")
    assert docs.read_text() == "# Benchmarks\n\n## Log redaction\n\ntable\n\n## Engine\n\nfast\n"


def test_a_heading_that_prefixes_another_is_not_confused_with_it(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\n## Load more\n\nkeep\n\n## Load\n\nold\n")
    write_section(docs, "## Load\n\nnew\n")
    assert docs.read_text() == "# Benchmarks\n\n## Load more\n\nkeep\n\n## Load\n\nnew\n"
