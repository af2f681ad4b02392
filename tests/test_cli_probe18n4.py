"""Issue 31, the eighteenth probe, item 4: SIGHUP (the terminal or ssh session
closed) ends a command with status 129, but the README's list of exit statuses named
only 130 (Ctrl-C) and 143 (SIGTERM). The list is pinned here against what a command
does when each signal reaches it."""

import re
import signal
from pathlib import Path

import pytest
from test_cli_faults import start, wait_for

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
LABELS = {signal.SIGHUP: "SIGHUP", signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


def _exit_statuses() -> str:
    """The README's bullet 'Exit statuses: ...', on one line."""
    found = re.search(r"^- Exit statuses:(.*?)(?=^- )", README, re.S | re.M)
    assert found, "README has no 'Exit statuses' list"
    return " ".join(found.group(1).split())


@pytest.mark.parametrize("sig", list(LABELS))
def test_the_readme_lists_the_status_each_stop_signal_gives(tmp_path, sig):
    out = tmp_path / "made" / "o.txt"
    proc = start(["data", "offline", "--chars", "100000000", "--out", str(out)])
    wait_for(out.parent.is_dir)  # generating for minutes from here
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert f"{128 + sig} {LABELS[sig]}" in _exit_statuses()
