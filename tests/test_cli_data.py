"""Leftovers of python -m txl_mini data: help, missing output folder, stale temp
files, SIGTERM during a download, a mismatching cached text8.zip moved aside (never
deleted)."""
import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from txl_mini import text8
from txl_mini.cli.data import main
from txl_mini.data import load_corpus_split
from txl_mini.files import atomic_path, remove_stale_temps

REPO = Path(__file__).resolve().parents[1]


def test_no_subcommand_prints_help(capsys):
    """On stderr (exit 2), as the bare `python -m txl_mini`: stdout is for results."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert "text8" in err and "offline" in err and "stats" in err and not out


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["offline", "--help"])
    assert "(default: 2000000)" in capsys.readouterr().out


def test_offline_out_into_missing_directory(tmp_path, capsys):
    """The folders are made, as train makes --out's (it was refused: 'does not
    exist; create it first')."""
    out = tmp_path / "no" / "such" / "corpus.txt"
    assert main(["offline", "--chars", "2000", "--out", str(out)]) == 0
    assert capsys.readouterr().err == "" and len(out.read_text()) == 2000


def test_stale_part_files_are_swept(tmp_path):
    """A dead download's temporary goes at any age; a live one's (its flock held by
    atomic_path, here in this process on another open file) is left alone."""
    dest = tmp_path / "text8.zip"
    dead = tmp_path / ".text8.zip.0abc1234.tmp"
    dead.write_bytes(b"x")
    with atomic_path(dest) as live:
        remove_stale_temps(dest)
        assert not dead.exists() and os.path.exists(live)


def test_mismatching_cache_file_is_moved_aside(tmp_path, capsys):
    (tmp_path / "text8.zip").write_bytes(b"placed by hand")
    with pytest.raises(text8.DataError):  # the download then fails: nobody listens
        text8.load_text8(cache_dir=tmp_path, url="http://127.0.0.1:9/text8.zip",
                         progress=False)
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("text8.zip.mismatch-")]
    assert len(aside) == 1 and aside[0].read_bytes() == b"placed by hand"
    assert "moved it to" in capsys.readouterr().err


@contextmanager
def trickling_server():
    """A local server that sends text8.zip's 100,000 bytes 100 at a time, 20 a
    second: a download that is under way for a while. Yields its URL."""
    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"x" * 100)
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/text8.zip"
    finally:
        srv.shutdown()
        srv.server_close()


def terminated_mid_download(code: str, cache_dir) -> tuple:
    """Run `python -c code URL CACHE_DIR` against trickling_server; SIGTERM once its
    temporary file is there. (returncode, stderr)."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["PYTHONPATH"] = str(REPO)
    with trickling_server() as url:
        proc = subprocess.Popen([sys.executable, "-c", code, url, str(cache_dir)],
                                env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while time.time() < deadline and not list(cache_dir.glob(".*.tmp")):
            time.sleep(0.1)
        assert list(cache_dir.glob(".*.tmp"))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_sigterm_during_download_leaves_no_part_file(tmp_path):
    """A server trickles bytes; SIGTERM mid-download; the temp file must be gone."""
    code = ("import sys; from txl_mini.text8 import load_text8; "
            "load_text8(cache_dir=sys.argv[2], url=sys.argv[1], progress=False)")
    rc, err = terminated_mid_download(code, tmp_path)
    assert rc != 0 and "SIGTERM" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_shared_corpus_loader(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("Hello, World! " * 100)
    tokens = load_corpus_split("offline", "valid", str(path))
    assert tokens.numel() == 70 and int(tokens.max()) < 27
    with pytest.raises(ValueError, match="unknown corpus"):
        load_corpus_split("wiki")
    with pytest.raises(text8.DataError, match="cannot read"):
        load_corpus_split("offline", "train", str(tmp_path / "missing.txt"))
