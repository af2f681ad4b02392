"""The text8 corpus: download, verify, cache, the standard 90M/5M/5M split.

text8 is the first 10^8 bytes of an English Wikipedia dump, reduced to a-z and space
(Mahoney, "Large Text Compression Benchmark"). `txl_mini.data` uses it.
"""
from __future__ import annotations

import errno
import hashlib
import http.client
import lzma
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Tuple

from tqdm import tqdm

from .cache_dir import CacheError, DataError, default_cache_dir  # noqa: F401 (text8's)
from .files import PathLike, atomic_path, not_a_file, remove_stale_temps, sha1_file

TEXT8_URL = "http://mattmahoney.net/dc/text8.zip"
TEXT8_ZIP_SIZE = 31_344_016
TEXT8_ZIP_SHA1 = "6c70299b93b7e1f927b42cd8f6ac1a31547c7a2e"
TEXT8_SIZE = 100_000_000
TEXT8_SHA1 = "0dc3edebc970dcc96137e7deda4d9995af9d93de"
TEXT8_CHARS = " abcdefghijklmnopqrstuvwxyz"  # index order: space=0, a=1 .. z=26
HINT = "Pass the original text8.zip or the unzipped text8 file."


@dataclass(frozen=True)
class Splits:
    """train / valid / test text of a corpus, and its `name` for runs to say."""

    # repr=False: printing 100M characters would freeze a notebook; __repr__: sizes
    train: str = field(repr=False)
    valid: str = field(repr=False)
    test: str = field(repr=False)
    name: str = "text8"

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k}={len(getattr(self, k)):,}"
                          for k in ("train", "valid", "test"))
        return f"Splits(name={self.name!r}, {sizes} chars)"


def split_sizes(n: int, n_valid: Optional[int] = None, n_test: Optional[int] = None
                ) -> Tuple[int, int, int]:
    """(n_train, n_valid, n_test) for a corpus of n chars; by default 5% each:
    n // 20 gives exactly 90M / 5M / 5M for the 100M-char text8, the paper's split."""
    n_valid = n // 20 if n_valid is None else n_valid
    n_test = n // 20 if n_test is None else n_test
    if min(n_valid, n_test) < 0 or n_valid + n_test >= n:
        raise ValueError(f"cannot split {n} chars into valid={n_valid} and "
                         f"test={n_test} and leave a non-empty train split")
    return n - n_valid - n_test, n_valid, n_test


def split_text8(text: str, n_valid: Optional[int] = None, n_test: Optional[int] = None,
                *, name: str = "text8") -> Splits:
    """Contiguous split in corpus order: train, then valid, then test."""
    n_train, n_valid, _ = split_sizes(len(text), n_valid, n_test)
    return Splits(text[:n_train], text[n_train:n_train + n_valid],
                  text[n_train + n_valid:], name=name)


def _check(what: str, size: int, sha1: str, want_size: int, want_sha1: str,
           hint: str) -> None:
    if (size, sha1) != (want_size, want_sha1):
        raise DataError(f"{what} failed verification: expected {want_size:,} bytes "
                        f"with sha1 {want_sha1}, got {size:,} bytes with sha1 {sha1}. "
                        f"{hint}")


def _read_text(path: Path, text_size: int, text_sha1: str, label: str = "") -> str:
    """The verified text of `path`: a zip holding `text8`, or the raw file."""
    try:
        data = (_unzip(path, text_size) if zipfile.is_zipfile(path)
                else path.read_bytes())
    except KeyError:
        raise DataError(
            f"{path} is a zip without a file named 'text8'. {HINT}") from None
    except NotImplementedError:  # a method zipfile has no decompressor for
        raise DataError(f"{path} is a zip file compressed with a method this Python "
                        f"cannot read (text8.zip's is deflate). {HINT}") from None
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError,
            UnicodeDecodeError) as e:  # bz2's: an OSError, no errno; a bad name's
        if isinstance(e, OSError) and e.errno is not None:  # the disk's, not the zip's
            raise DataError(f"could not read {path}: {e}. {HINT}") from None
        raise DataError(f"{path} is a damaged zip file ({e}). {HINT}") from None
    # The text's own checksum is what guarantees the corpus; a re-zipped copy is fine.
    _check(label or f"text8 in {path}", len(data), hashlib.sha1(data).hexdigest(),
           text_size, text_sha1, HINT)
    return data.decode("latin-1")  # never fails; CharVocab.encode names odd characters


def _unzip(path: Path, text_size: int) -> bytes:
    """The `text8` entry of the zip `path`, refused unread where it is encrypted or
    larger than text8 (a zip bomb's 5 GiB of spaces were decompressed whole)."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("text8")
        if info.flag_bits & 1:
            raise DataError(f"{path} is an encrypted zip file; text8.zip has no "
                            f"password. {HINT}")
        if info.file_size > text_size:
            raise DataError(f"text8 in {path} failed verification: expected "
                            f"{text_size:,} bytes, it holds {info.file_size:,} (not "
                            f"read). {HINT}")
        with zf.open(info) as f:  # no more than that, whatever the directory says
            return f.read(text_size + 1)


def _reason(e: Exception) -> str:
    """A short human reason for a failed download, without urllib's internals."""
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {e.reason}"
    return str(getattr(e, "reason", None) or e) or type(e).__name__


class _Terminated(BaseException):
    """SIGTERM arrived during a download; raised so that the temp file is removed."""


def _download(url: str, dest: Path, zip_size: int, zip_sha1: str, text_size: int,
              text_sha1: str, progress: bool) -> str:
    """Stream `url` into a temp file beside `dest`, verify the zip and the text inside
    it, and only then rename it to `dest` (files.atomic_path). Returns the text."""
    remove_stale_temps(dest)  # left by downloads that were killed
    old_term = None
    untaken = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # else the CLI's: 143
    if untaken and threading.current_thread() is threading.main_thread():
        def on_term(signum, frame):
            raise _Terminated()
        old_term = signal.signal(signal.SIGTERM, on_term)
    try:
        # any failure, Ctrl-C and SIGTERM included: atomic_path leaves no half file
        with atomic_path(dest) as tmp:
            h, size = hashlib.sha1(), 0
            try:
                with open(tmp, "wb") as f, urllib.request.urlopen(url, timeout=60) as r:
                    total = int(r.headers.get("Content-Length") or zip_size)
                    with tqdm(total=total, unit="B", unit_scale=True, desc=dest.name,
                              disable=not progress) as bar:
                        for chunk in iter(lambda: r.read(1 << 16), b""):
                            f.write(chunk)
                            h.update(chunk)
                            size += len(chunk)
                            bar.update(len(chunk))
                if size < total:  # the server hung up early: the network, not the file
                    raise ConnectionError(
                        f"connection closed after {size:,} of {total:,} bytes")
            except (OSError, ValueError, http.client.HTTPException) as e:  # bad url
                raise DataError(
                    f"could not download {url}: {_reason(e)}. Check your connection "
                    f"and retry, or place text8.zip at {dest}, or give path=... a "
                    "copy you downloaded yourself") from None
            _check(f"download of {url}", size, h.hexdigest(), zip_size, zip_sha1,
                   "Nothing was saved. Retry, or download it yourself and give "
                   "path=... the file.")
            return _read_text(Path(tmp), text_size, text_sha1,
                              label=f"text8 inside {url}")
    except _Terminated:
        raise SystemExit(f"terminated (SIGTERM) while downloading {url}; "
                         "nothing was saved") from None
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def load_text8(path: Optional[PathLike] = None, *, cache_dir: Optional[PathLike] = None,
               url: str = TEXT8_URL, zip_size: int = TEXT8_ZIP_SIZE,
               zip_sha1: str = TEXT8_ZIP_SHA1, text_size: int = TEXT8_SIZE,
               text_sha1: str = TEXT8_SHA1, progress: bool = True) -> Splits:
    """text8 as the standard 90M / 5M / 5M split, verified by size and sha1. With
    `path` (text8.zip or the unzipped text8) nothing is downloaded. Otherwise the zip
    is fetched once into `cache_dir` (default: `default_cache_dir()`) and reused. Any
    failure raises one `DataError` that says what failed and how to proceed."""
    if path is not None:
        p = Path(path).expanduser()
        if what := not_a_file(p):
            raise DataError(f"{what}. Give path=... text8.zip or the unzipped text8 "
                            f"file, or leave it out to download {url}.")
        return split_text8(_read_text(p, text_size, text_sha1))

    cache = (Path(cache_dir).expanduser() if cache_dir is not None
             else default_cache_dir())
    made = [p for p in (cache, *cache.parents) if not p.exists()]  # to undo on failure
    how = ("Give cache_dir=... a directory you can write." if cache_dir is not None
           else "Set TXL_MINI_CACHE to a directory you can write.")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        return _cached_or_download(cache, url, zip_size, zip_sha1, text_size,
                                   text_sha1, progress)
    except BaseException as e:  # a failed first download leaves no empty cache folder
        for p in made:  # deepest first
            try:
                p.rmdir()
            except OSError:
                break
        if isinstance(e, OSError):  # not the download's (a DataError): the folder's
            why = not_a_file(cache / "text8.zip", missing=False) or (
                f"{e.filename}: {e.strerror}" if e.filename not in (None, str(cache))
                else e.strerror)
            disk = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO)  # no folder's
            error = DataError if disk else CacheError
            raise error(f"cannot use cache directory {cache}: {why}. {how}") from None
        raise


def _cached_or_download(cache: Path, url: str, zip_size: int, zip_sha1: str,
                        text_size: int, text_sha1: str, progress: bool) -> Splits:
    dest = cache / "text8.zip"
    if dest.is_file() and (dest.stat().st_size != zip_size  # a wrong size: not hashed
                           or sha1_file(dest) != zip_sha1):
        # not the verified file (damaged, or placed by hand): kept aside, never deleted
        aside = dest.with_name(f"{dest.name}.mismatch-{int(time.time())}")
        dest.rename(aside)
        print(f"note: {dest} does not match text8's checksum; moved it to "
              f"{aside.name} and fetching a fresh copy", file=sys.stderr)
    return split_text8(_read_text(dest, text_size, text_sha1) if dest.is_file() else
                       _download(url, dest, zip_size, zip_sha1, text_size, text_sha1,
                                 progress))
