"""The README stays a front page, docs/index.md lists every page, links resolve, and every `horovod-cluster
<subcommand>` the docs show in a shell block is a real subcommand (issue 44, item 6)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 150

# [text](target) and [text](target "title"); images too. Reference-style links are not used here.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SHELL_BLOCK = re.compile(r"^```(?:bash|console|sh|shell)[^\n]*\n(.*?)^```", re.S | re.M)
COMMAND = re.compile(r"(?:^|[\s;&|(`$])horovod-cluster\s+([a-z][a-z0-9-]*)(?:\s+([a-z][a-z0-9-]*))?")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), *sorted((REPO / "roles").glob("*/README.md"))]


def relative_links(path: Path) -> list[str]:
    """The relative link targets of a markdown file, code blocks and inline code left out, #fragments stripped."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http(s), mailto: ...; an anchor in the same page
        targets.append(target.split("#", 1)[0])
    return targets


def shell_commands(path: Path) -> set[tuple[str, str | None]]:
    """(subcommand, next word) for each `horovod-cluster <subcommand>` in the file's ```bash/```console blocks."""
    found = set()
    for block in SHELL_BLOCK.findall(path.read_text()):
        for line in block.splitlines():
            line = line.split("#", 1)[0] if not line.lstrip().startswith("$") else line.lstrip()[1:].split("#", 1)[0]
            found.update(COMMAND.findall(line))
    return found


def test_readme_is_a_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail to docs/ (at most " \
                                           f"{MAX_README_LINES})"


def test_the_index_lists_every_page_and_nothing_else():
    listed = {target for target in relative_links(DOCS / "index.md") if "/" not in target}
    pages = {path.name for path in DOCS.glob("*.md")}
    assert pages - listed == set(), "pages docs/index.md does not link"
    assert listed - pages == set(), "docs/index.md links pages that do not exist"
    assert "using.md" in listed and "testing.md" in listed
    assert "docs/index.md" in relative_links(README)


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    targets = relative_links(path)
    missing = [target for target in targets if target and not (path.parent / target).exists()]
    assert not missing, f"{path.relative_to(REPO)} links to missing files: {missing}"


def test_the_link_reader_finds_what_it_should(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](a.md) [b](../b.md#x) [web](https://x.org/y.md) [here](#top) `[no](code.md)`\n"
                    "```bash\n[no](block.md)\n```\n")
    assert relative_links(page) == ["a.md", "../b.md"]


def subcommands() -> dict[str, set[str]]:
    """The CLI's subcommands, and for a group its own subcommands, from the click group itself."""
    sys.path.insert(0, str(REPO / "src"))
    try:
        from horovod_cluster.cli import main
    finally:
        sys.path.remove(str(REPO / "src"))
    return {name: set(getattr(command, "commands", {})) for name, command in main.commands.items()}


def named_commands() -> dict[tuple[str, ...], list[str]]:
    """Each command line the docs name (`sandbox up`, `rollout`), with the files that name it."""
    named: dict[tuple[str, ...], list[str]] = {}
    groups = subcommands()
    for path in [README, *sorted(DOCS.glob("*.md"))]:
        for sub, nxt in shell_commands(path):
            words = (sub, nxt) if groups.get(sub) and nxt else (sub,)
            named.setdefault(words, []).append(str(path.relative_to(REPO)))
    return named


def test_the_shell_block_reader_finds_commands(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```bash\nhorovod-cluster frobnicate -i x   # horovod-cluster nothere\n"
                    "$ horovod-cluster sandbox up --hosts 3\n```\n```python\nhorovod-cluster notshell\n```\n"
                    "Prose: horovod-cluster prose\n")
    assert shell_commands(page) == {("frobnicate", ""), ("sandbox", "up")}


def test_every_named_subcommand_is_real():
    real = subcommands()
    named = named_commands()
    assert ("rollout",) in named and ("plan",) in named, named  # the reader reads the docs at all
    unknown = {words: where for words, where in named.items()
               if words[0] not in real or (len(words) == 2 and words[1] not in real[words[0]])}
    assert not unknown, f"not subcommands of horovod-cluster: {unknown}"


def test_every_named_subcommand_answers_help():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"),
                                                                      os.environ.get("PYTHONPATH")]))}
    for words in sorted(named_commands()):
        done = subprocess.run([sys.executable, "-m", "horovod_cluster", *words, "--help"], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (words, done.stderr[-2000:])
        assert "Usage:" in done.stdout, words
