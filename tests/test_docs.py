"""The README says what the code does: the key table is the schema's, and its commands work
when followed in order on a fresh clone."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

from harness.cli import build_parser
from harness.competition.options import options_table
from harness.tournament.config import default_config

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
START = "<!-- options-table:"
END = "<!-- end of options-table -->"


def commands() -> list[str]:
    """Every shell line of the README's indented code blocks, in order (continuations
    joined)."""
    lines: list[str] = []
    pending = ""
    for raw in README.splitlines():
        if not raw.startswith("    ") or raw.strip().startswith(("#", "```")):
            continue
        text = pending + raw.strip()
        if text.endswith("\\"):
            pending = text[:-1] + " "
            continue
        pending = ""
        lines.append(text)
    return lines


def test_readme_key_table_is_the_one_the_schema_generates() -> None:
    start = README.index(START)
    table = README[README.index("\n", start) + 1: README.index(END)].strip()
    assert table == options_table(), (
        "regenerate it: python -c 'from harness.competition.options import options_table; "
        "print(options_table())'")


def test_readme_quick_start_is_two_commands_that_work_without_an_active_venv() -> None:
    quick = README[README.index("## Quick start"):README.index("## Using it")]
    lines = [ln.strip() for ln in quick.splitlines() if ln.startswith("    ")]
    assert lines == ["python3 -m venv .venv && .venv/bin/pip install -q -e . && "
                     ".venv/bin/euchre-harness run", "bash .ci/run"]


def test_readme_activates_the_venv_before_the_first_euchre_harness_command() -> None:
    lines = commands()
    activate = next(i for i, line in enumerate(lines) if line == ". .venv/bin/activate")
    first_use = next(i for i, line in enumerate(lines) if line.startswith("euchre-harness "))
    install = next(i for i, line in enumerate(lines) if "pip install" in line)
    assert install < activate < first_use


def test_readme_node_bot_is_installed_before_it_is_used() -> None:
    lines = commands()
    install = next(i for i, line in enumerate(lines) if line.startswith("npm ci"))
    first_use = next(i for i, line in enumerate(lines)
                     if line.startswith("euchre-harness") and "random_bot.js" in line)
    assert install < first_use


def test_readme_commands_parse_with_the_real_command_line() -> None:
    parser = build_parser()
    used = [line for line in commands() if line.startswith("euchre-harness ")]
    assert len(used) >= 6
    for line in used:
        words = shlex.split(line, comments=True)[1:]
        if words and words[-1] == "&":  # started in the background
            words.pop()
        parser.parse_args(words)  # exits (fails the test) on an unknown flag


def test_readme_replay_example_names_a_game_of_the_quick_start_tournament() -> None:
    replays = [line for line in commands() if line.startswith("euchre-harness replay ")]
    assert replays
    first_key = next(iter(default_config().make_format().games())).key
    for line in replays:
        reference = shlex.split(line.split("  #")[0])[2]
        assert reference == f"{default_config().id}/{first_key}", line


def test_readme_documents_the_address_file_and_tokens() -> None:
    assert "--address-file PATH" in README and "referee on HOST:PORT" in README
    assert re.search(r"seats-per-game x `concurrency` tokens", README)
    assert "Local bots run in the folder `euchre-harness` was started from" in README


MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target "title")


@functools.cache
def heading_anchors(page: Path) -> frozenset[str]:
    """The anchors a Markdown viewer gives ``page``'s headings (GitHub's rule: lower case,
    punctuation other than hyphens dropped, spaces made hyphens; a repeated heading gets
    ``-1``, ``-2``... in order), outside fenced code."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            text = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower())
            anchor = text.replace(" ", "-")
            repeats = seen.get(anchor, 0)
            seen[anchor] = repeats + 1
            anchors.add(f"{anchor}-{repeats}" if repeats else anchor)
    return frozenset(anchors)


def test_every_relative_link_of_the_docs_leads_to_a_file_and_heading_that_exist() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "bench" / "README.md"]
    checked, broken = 0, []
    for page in pages:
        for match in MARKDOWN_LINK.finditer(page.read_text()):
            target = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            checked += 1
            path, _, anchor = target.partition("#")
            file = page.parent / path if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in heading_anchors(file):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert checked >= 10  # the pattern still finds the docs' links
    assert not broken, "\n".join(broken)
