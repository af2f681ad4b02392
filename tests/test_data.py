"""Tests of txl_mini.data and txl_mini.corpus. Nothing here touches the internet:
downloads go to an HTTP server on 127.0.0.1 that serves a small zip built by the
test."""
import hashlib
import http.server
import io
import os
import socket
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
import torch

from txl_mini.cli.data import main
from txl_mini.corpus import Dependency, make_offline_corpus, offline_splits
from txl_mini.data import CharVocab, batchify, iter_segments, n_segments, normalize
from txl_mini.text8 import (
    TEXT8_CHARS,
    DataError,
    Splits,
    default_cache_dir,
    load_text8,
    split_sizes,
    split_text8,
)

REPO = Path(__file__).resolve().parents[1]
# a 1000-char stand-in
TEXT = "".join(TEXT8_CHARS[(i * 7 + i // 13) % 27] for i in range(1000))


def _zip_bytes(text: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("text8", text)
    return buf.getvalue()


ZIP = _zip_bytes(TEXT)
SIZES = dict(zip_size=len(ZIP), zip_sha1=hashlib.sha1(ZIP).hexdigest(),
             text_size=len(TEXT), text_sha1=hashlib.sha1(TEXT.encode()).hexdigest(),
             progress=False)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # A proxy in the environment would route 127.0.0.1 away from the test server.
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server():
    """Start a server: server(mode) -> (url, state); state["requests"] counts GETs."""
    started = []

    def start(mode="good"):
        state = {"requests": 0}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                state["requests"] += 1
                if mode == "missing":
                    self.send_error(404)
                    return
                body = ZIP
                if mode == "corrupt":  # right size, one byte flipped
                    body = ZIP[:100] + bytes([ZIP[100] ^ 0xFF]) + ZIP[101:]
                self.send_response(200)
                self.send_header("Content-Length", str(len(ZIP)))
                self.end_headers()
                # "truncated": promise len(ZIP) bytes, send half, hang up.
                self.wfile.write(body[: len(ZIP) // 2] if mode == "truncated" else body)

            def log_message(self, *args):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
        started.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/text8.zip", state

    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


# --- splits ---------------------------------------------------------------------------

def test_split_of_100_chars_is_90_5_5_in_order():
    text = "".join(TEXT8_CHARS[i % 27] for i in range(100))
    s = split_text8(text)
    assert (len(s.train), len(s.valid), len(s.test)) == (90, 5, 5)
    assert (s.train, s.valid, s.test) == (text[:90], text[90:95], text[95:])
    assert s.name == "text8" and "90" in repr(s) and text not in repr(s)
    # the paper's split
    assert split_sizes(100_000_000) == (90_000_000, 5_000_000, 5_000_000)
    with pytest.raises(ValueError):
        split_sizes(10, 5, 5)


# --- text8 loader ---------------------------------------------------------------------

def test_download_verifies_caches_and_reuses(server, tmp_path):
    url, state = server()
    first = load_text8(cache_dir=tmp_path, url=url, **SIZES)
    assert first == split_text8(TEXT)
    assert os.listdir(tmp_path) == ["text8.zip"]  # cached, and no temp file left over
    assert state["requests"] == 1
    second = load_text8(cache_dir=tmp_path, url=url, **SIZES)
    assert second == first and state["requests"] == 1  # served from the cache


def test_damaged_cache_file_is_fetched_again(server, tmp_path):
    url, state = server()
    (tmp_path / "text8.zip").write_bytes(b"not the zip")
    assert load_text8(cache_dir=tmp_path, url=url, **SIZES) == split_text8(TEXT)
    assert state["requests"] == 1 and (tmp_path / "text8.zip").read_bytes() == ZIP


@pytest.mark.parametrize("mode", ["corrupt", "truncated"])
def test_bad_download_raises_and_leaves_nothing(server, tmp_path, mode):
    url, state = server(mode)
    with pytest.raises(DataError) as err:
        load_text8(cache_dir=tmp_path, url=url, **SIZES)
    msg = str(err.value)
    assert url in msg and "path=" in msg
    assert (("failed verification" in msg) if mode == "corrupt"
            else ("could not download" in msg))
    assert os.listdir(tmp_path) == []  # neither a cached file nor a temp file
    assert state["requests"] == 1


def test_http_error_is_one_clear_data_error(server, tmp_path):
    url, _ = server("missing")
    with pytest.raises(DataError, match="HTTP 404"):
        load_text8(cache_dir=tmp_path, url=url, **SIZES)
    assert os.listdir(tmp_path) == []


def test_offline_gives_clear_message_without_urllib_chain(tmp_path):
    # a port that was free a moment ago: nothing listens there
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/text8.zip"
    with pytest.raises(DataError) as err:
        load_text8(cache_dir=tmp_path, url=url, **SIZES)
    msg = str(err.value)
    assert msg.startswith(f"could not download {url}: ") and "path=" in msg
    assert str(tmp_path / "text8.zip") in msg  # says where to put the file by hand
    assert (err.value.__cause__ is None
            and err.value.__suppress_context__)  # raised from None
    assert os.listdir(tmp_path) == []


def test_local_path_zip_or_raw_file(tmp_path):
    (tmp_path / "text8.zip").write_bytes(ZIP)
    (tmp_path / "text8").write_text(TEXT)
    for p in (tmp_path / "text8.zip", str(tmp_path / "text8")):
        assert load_text8(p, **SIZES) == split_text8(TEXT)


def test_wrong_local_path_is_clear(tmp_path):
    missing = tmp_path / "nope" / "text8.zip"
    with pytest.raises(DataError, match="no such file") as err:
        load_text8(missing, **SIZES)
    assert str(missing) in str(err.value)


def test_local_file_with_bad_checksum(tmp_path):
    p = tmp_path / "text8"
    # same size, other content
    p.write_text(TEXT[:-1] + ("a" if TEXT[-1] != "a" else "b"))
    with pytest.raises(DataError, match="failed verification"):
        load_text8(p, **SIZES)
    z = tmp_path / "other.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("not_text8", TEXT)
    with pytest.raises(DataError, match="without a file named 'text8'"):
        load_text8(z, **SIZES)


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TXL_MINI_CACHE", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("TXL_MINI_CACHE")
    assert default_cache_dir() == tmp_path / "x" / "txl_mini"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "txl_mini"


# --- vocabulary -----------------------------------------------------------------------

def test_vocab_order_and_round_trip():
    v = CharVocab()
    assert len(v) == 27 and v.chars == " abcdefghijklmnopqrstuvwxyz"
    ids = v.encode(" az")
    assert ids.dtype == torch.int64 and ids.tolist() == [0, 1, 26]
    assert v.decode(v.encode(TEXT)) == TEXT
    assert v.decode(v.encode(TEXT).tolist()) == TEXT
    assert v.encode("").shape == (0,) and v.decode([]) == ""
    with pytest.raises(ValueError, match="ids must lie"):
        v.decode([27])


@pytest.mark.parametrize("text, char, pos", [("ab Cd", "C", 3), ("hello\n", "\n", 5),
                                             ("caf\u00e9", "\u00e9", 3),
                                             ("x \u20ac", "\u20ac", 2)])
def test_unknown_character_is_named_with_position(text, char, pos):
    with pytest.raises(ValueError) as err:
        CharVocab().encode(text)
    assert repr(char) in str(err.value) and f"position {pos}" in str(err.value)


def test_unknown_space_option_and_normalize():
    v = CharVocab()
    assert v.decode(v.encode("a\u20acB!", unknown="space")) == "a   "
    # same length, positions kept
    assert normalize("Hello, World\u20ac") == "hello  world "
    with pytest.raises(ValueError):
        v.encode("a", unknown="drop")


# --- batching and segments ------------------------------------------------------------

def test_batchify_makes_contiguous_streams():
    tokens = torch.arange(103)
    streams = batchify(tokens, 4)  # (B, T) = (4, 25); the last 3 tokens are dropped
    assert streams.shape == (4, 25)
    for b in range(4):
        assert torch.equal(streams[b], tokens[b * 25:(b + 1) * 25])
    with pytest.raises(ValueError):
        batchify(torch.arange(5), 4)


@pytest.mark.parametrize("T, L", [(25, 5), (26, 5), (27, 5), (10, 20), (2, 1),
                                  (100, 7)])
def test_segments_are_contiguous_and_score_every_target_once(T, L):
    B = 3
    streams = torch.arange(B * T).view(B, T)  # each value is its own global position
    segs = list(iter_segments(streams, L))
    assert len(segs) == n_segments(T, L)
    seen = []
    for k, (x, y) in enumerate(segs):
        assert x.shape == y.shape and x.shape[0] == B
        assert x.shape[1] == L or k == len(segs) - 1  # only the last may be shorter
        assert torch.equal(y, x + 1)  # y is x shifted by one inside each stream
        # the last target of k is the first input of k+1, every stream
        if k + 1 < len(segs):
            assert torch.equal(y[:, -1], segs[k + 1][0][:, 0])
        seen.append(y)
    targets = torch.cat(seen, dim=1)  # (B, T-1)
    assert torch.equal(targets, streams[:, 1:])  # every position 1..T-1 once, in order


# --- offline corpus -------------------------------------------------------------------

def test_offline_corpus_is_deterministic_and_in_alphabet():
    a = make_offline_corpus(20_000, seed=1)
    assert a.text == make_offline_corpus(20_000, seed=1).text and a.deps == \
        make_offline_corpus(20_000, seed=1).deps
    assert a.text != make_offline_corpus(20_000, seed=2).text
    assert (len(a.text) == 20_000 and set(a.text) <= set(TEXT8_CHARS)
            and "  " not in a.text)
    assert a.name == "offline" and "20,000" in repr(a)
    words = a.text.split()
    assert (len(set(words)) > 100
            and sum(map(len, words)) / len(words) < 8)  # words, not noise


def test_planted_dependencies_read_back_at_their_distance():
    c = make_offline_corpus(50_000, seed=0, distances=(64, 256, 512))
    assert {d.distance for d in c.deps} == {64, 256, 512}
    for dist in (64, 256, 512):
        assert sum(d.distance == dist for d in c.deps) >= 10  # several plantings each
    for d in c.deps:
        assert isinstance(d, Dependency) and d.target - d.cue == d.distance
        name = c.text[d.cue:d.cue + d.length]
        assert name == c.text[d.target:d.target + d.length] and name.isalpha()
        # whole words: the name is delimited by spaces at both mentions
        assert c.text[d.cue - 1] == " " == c.text[d.target - 1]
        assert c.text[d.cue + d.length] == " "
    mask = c.dependent_mask()
    assert mask.dtype == torch.bool and mask.shape == (len(c.text),)
    assert mask.sum().item() == sum(d.length - 1 for d in c.deps)
    assert c.dependent_mask(distance=64).sum() < mask.sum()


def test_single_distance_windows_and_splits():
    c = make_offline_corpus(40_000, seed=3, distances=300)
    assert c.distances == (300,) and all(d.distance == 300 for d in c.deps)
    parts = c.split()
    assert [len(p.text) for p in parts] == [36_000, 2_000, 2_000]
    for p in parts:  # re-based dependencies still read back inside each split
        for d in p.deps:
            assert (p.text[d.cue:d.cue + d.length]
                    == p.text[d.target:d.target + d.length])
    assert len(parts[1].deps) > 0
    s = offline_splits(40_000, seed=3, distances=300)
    assert isinstance(s, Splits) and s.name == "offline" and s.valid == parts[1].text
    with pytest.raises(ValueError):
        make_offline_corpus(1000, distances=(8,))


# --- CLI ------------------------------------------------------------------------------

def _cli(*argvs):
    """Run several `python -m txl_mini data` commands at once (each pays torch's import
    time)."""
    procs = [subprocess.Popen([sys.executable, "-m", "txl_mini", "data", *map(str, a)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for a in argvs]
    return [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]


def test_cli_smoke_in_a_subprocess(tmp_path):
    out, deps = tmp_path / "offline.txt", tmp_path / "deps.tsv"
    (rc, stdout, stderr), (bad_rc, _, bad_err) = _cli(
        ("offline", "--chars", 20_000, "--seed", 3, "--distances", "64,300",
         "--out", out, "--deps-out", deps),
        ("text8", "--path", tmp_path / "missing.zip"))
    assert rc == 0, stderr
    c = make_offline_corpus(20_000, seed=3, distances=(64, 300))
    assert out.read_text() == c.text
    assert len(deps.read_text().splitlines()) == len(c.deps) + 1
    assert ("distance 300" in stdout
            and sorted(os.listdir(tmp_path)) == ["deps.tsv", "offline.txt"])
    # a bad path: nonzero exit, one line on stderr that says what failed, no traceback
    assert bad_rc == 2 and "Traceback" not in bad_err  # bad input
    assert len(bad_err.strip().splitlines()) == 1 and "no such file" in bad_err


def test_cli_in_process(tmp_path, capsys):
    out = tmp_path / "offline.txt"
    assert main(["offline", "--chars", "5000", "--out", str(out)]) == 0
    assert main(["stats", str(out)]) == 0 and "5,000 chars" in capsys.readouterr().out
    assert main(["stats", str(tmp_path / "nope")]) == 2  # bad input
    bad = tmp_path / "x"
    assert main(["offline", "--chars", "100", "--distances", "8",
                 "--out", str(bad)]) == 2  # a bad option value: usage, exit 2
    err = capsys.readouterr().err
    assert err.count("error:") == 2 and "Traceback" not in err and not bad.exists()
    with pytest.raises(SystemExit) as ex:  # argparse: usage error, exit status 2
        main(["offline", "--chars", "many", "--out", str(out)])
    assert ex.value.code == 2
    with pytest.raises(SystemExit) as ex:
        main(["--help"])
    assert ex.value.code == 0 and "offline" in capsys.readouterr().out
