"""The text a training run reads: its splits, its size checks and its fingerprint."""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import sys
import zipfile
from contextlib import contextmanager

import numpy as np
import torch

from ..corpus import BOOK_CORPORA
from ..data import MAX_TEXT_BYTES, OFFLINE_CHARS, CharVocab, corpus_splits
from ..text8 import CacheError, DataError
from . import plural
from .errors import typed
from .options import UsageError, rank_zero
from .outputs import check_cache_env, check_download_folder
from .paths import refuse_directory, refuse_fd_path, refuse_missing, refuse_recorded

# how text8's messages name load_text8's arguments -> the options that set them
OPTION_NAMES = {"path=...": "--path", "cache_dir=...": "--cache-dir"}
# text8's words for a zip it cannot read: damaged, encrypted, an unknown method
BAD_ZIP = "is a damaged zip|is an encrypted zip|is a zip file compressed"
# and for a file that is there but is not text8 (a read that fails is not bad input:
# exit 1, as a disk's fault)
NOT_TEXT8 = re.compile(f"failed verification|is a zip without|{BAD_ZIP}")


def sha1_tokens(tokens: torch.Tensor) -> str:
    """The corpus' fingerprint, so a resumed run can refuse different text."""
    return hashlib.sha1(tokens.to(torch.uint8).numpy().tobytes()).hexdigest()


def check_not_empty(path) -> None:
    """--path: a file with text in it (else exit 2; one we may not read: exit 1)."""
    refuse_directory(path, f"--path {path}")
    refuse_missing(path, f"--path {path}")
    if path is not None and os.path.isfile(path) and _empty(path):
        raise UsageError(f"--path {path} is empty: there is no text in it")


def _empty(path: str) -> bool:
    """No byte to read: by reading, where the size says 0 (a /proc file has text
    that its size does not count). One we may not read is not called empty."""
    if os.path.getsize(path):
        return False
    try:
        with open(path, "rb") as f:
            return not f.read(1)
    except OSError:
        return False


@contextmanager
def option_names(path: str | None = None):
    """A DataError from text8 names load_text8's arguments (`give path=...`), for a
    library user; a command line's user reads the options instead (`give --path`).
    Only data text8 has --cache-dir, and only it passes cache_dir. `path`: --path,
    the file read, said to be a zip cut short where it is one."""
    try:
        yield
    except DataError as e:
        if path and _cut_zip(path):
            raise UsageError(f"--path {path} is not a complete zip file (cut short or "
                             "damaged); pass the original text8.zip or the unzipped "
                             "text8 file") from None
        msg = str(e)
        for arg, option in OPTION_NAMES.items():
            msg = msg.replace(arg, option)
        if path and re.match(f"{re.escape(path)} ({BAD_ZIP})", msg):  # as a cut one
            msg = f"--path {msg}"
        # a --path that is not text8, a cache folder text8 cannot use: bad input
        if NOT_TEXT8.search(msg) or isinstance(e, CacheError):
            raise UsageError(msg) from None
        raise DataError(msg) from None


def _cut_zip(path: str) -> bool:
    """`path` begins as a zip does but is no whole one: text8 read it as the raw
    text, and said a text8.zip cut to 100 bytes was text8 of the wrong size."""
    if not os.path.isfile(path):  # a FIFO is not opened: it would block
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04" and not zipfile.is_zipfile(path)
    except OSError:
        return False


def check_text_file(path: str, prog: str) -> None:
    """A --path for the offline corpus, read one byte per character and normalized
    (every byte outside a-z/A-Z a space), judged by its first MiB: refused with no
    letter a-z/A-Z at all (a Chinese text trained on spaces alone, after a note); a
    warning when under half of it are letters (asking, if it looks binary: NUL
    bytes, or not UTF-8, whether it is text); else a note counting its characters
    outside ASCII, whatever the encoding (a Latin-1 'é' had none, UTF-8's did)."""
    if os.path.getsize(path) > MAX_TEXT_BYTES:  # refused when read: that line alone
        return
    with open(path, "rb") as f:
        raw = f.read(1 << 20)  # the first MiB
    whole = len(raw) < 1 << 20  # the file, not its first MiB
    lower = np.frombuffer(raw, dtype=np.uint8) | 0x20  # A-Z -> a-z
    letters = float(((lower >= 97) & (lower <= 122)).mean()) if raw else 1.0
    if letters == 0:  # every rank refuses alike
        raise UsageError(f"--path {path} has no letters a-z/A-Z" +
                         ("" if whole else " in its first MiB") + ": each of its "
                         "bytes would become a space; give a text written in a-z/A-Z")
    if not raw or not rank_zero():
        return
    text = _utf8(raw, whole)
    binary = text is None or "\0" in text
    if letters < 0.5:
        print(f"{prog}: warning: only {letters:.0%} of {path}'s first MiB are letters "
              "a-z/A-Z (under half); everything else becomes a space" +
              (". Is it a text file?" if binary else ""), file=sys.stderr)
        if binary:
            return
    _note_non_ascii(raw, text, path + ("" if whole else "'s first MiB"), prog)


def _note_non_ascii(raw: bytes, text: str | None, where: str, prog: str) -> None:
    """The note on `raw`'s characters outside ASCII (`text`: raw as UTF-8, if it is)."""
    if text is not None:
        foreign = [c for c in text if not c.isascii()]
        seen = list(dict.fromkeys(c for c in foreign if c.isprintable()))
        shown = ", ".join(seen[:3]) + (", ..." if len(seen) > 3 else "")
        how = ((f" ({shown})" if seen else "") +
               ": each of their UTF-8 bytes becomes a space")
    else:
        foreign = [b for b in raw if b >= 128]
        how = " (one byte each: it is not UTF-8; Latin-1, say): each becomes a space"
    if foreign:
        are = "is" if len(foreign) == 1 else "are"
        print(f"{prog}: note: {plural(len(foreign), 'character')} of {where} {are} "
              f"outside ASCII{how}, as every byte outside a-z/A-Z does",
              file=sys.stderr)


def _utf8(raw: bytes, whole: bool) -> str | None:
    """`raw` as UTF-8 text, None if it is not (a character cut at the end of a
    first MiB is not counted against it)."""
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(raw, final=whole)
    except UnicodeDecodeError:
        return None


def check_corpus_options(args, given: bool) -> None:
    """--offline-chars (`given` on the command line) sizes the generated corpus
    alone: with another corpus, or a file, it would be ignored, so it is refused.
    text8's cache folder, set in the environment, is checked here, before a run
    folder is made."""
    refuse_fd_path(args.path)  # /dev/stdin: gone once this process is
    if args.corpus == "text8":
        check_cache_env()
        if args.path is None:  # a download into it, unless text8.zip is there
            check_download_folder(None)
    if given and (args.path or args.corpus != "offline"):
        other = (f"--path {args.path} is read whole" if args.path else
                 f"--corpus {args.corpus} is " + ("read whole" if args.corpus ==
                                                   "text8" else
                                                   "generated at its own size"))
        raise UsageError(f"--offline-chars sizes the generated offline corpus; "
                         f"{other}; drop it")


def refuse_path(corpus: str, path: str | None) -> None:
    """A --path for a corpus generated from its settings: an option, exit 2."""
    if corpus in BOOK_CORPORA and path is not None:
        raise UsageError(f"--path: corpus {corpus!r} is generated from its recorded "
                         "settings; it reads no file (drop --path)")


def load_corpus(args, cfg, prog: str, trained: dict | None = None):
    """(train tokens, validation tokens, corpus record); checks the sizes and, for a
    resumed run, that the text is the one it `trained` on (config.json's record)."""
    refuse_path(args.corpus, args.path)
    check_not_empty(args.path)
    if args.corpus == "offline" and args.path and os.path.isfile(args.path):
        check_text_file(args.path, prog)
    with option_names(args.path):
        splits = corpus_splits(args.corpus, args.path, args.offline_chars)  # read once
    encode = CharVocab().encode
    tokens, valid = encode(splits.train), encode(splits.valid[:args.eval_chars])
    sha1 = sha1_tokens(tokens)  # before the sizes: other text's are not the run's
    if trained and sha1 != trained["sha1"]:  # bad input, exit 2, as evaluate says it
        if args.path and args.corpus == "offline" and not trained.get("path"):
            raise UsageError(f"{args.run_dir} trained on the generated offline corpus, "
                             "not a file; drop --path")
        raise UsageError(f"the corpus differs from the one {args.run_dir} was trained "
                         f"on (sha1 {sha1[:12]} vs {trained['sha1'][:12]})" +
                         ("; give the text it trained on with --path FILE"
                          if args.path else ""))
    if short := short_streams(len(tokens), args.batch_size, cfg.seg_len):
        raise UsageError(f"the training split has {len(tokens):,} chars: {short}; "
                         "lower --batch-size or --seg-len, or use a longer corpus")
    if len(valid) < 2:  # --eval-chars >= 2, so the file is too short (not the option)
        raise UsageError(f"--path {args.path}: its valid split (5% of the text) has "
                         f"{len(splits.valid)} characters; validation needs at least "
                         "2; give a longer text")
    corpus = {"name": args.corpus, "path": args.path, "chars": len(tokens),
              "sha1": sha1}
    return tokens, valid, corpus


def short_streams(n: int, B: int, L: int) -> str | None:
    """Train's and evaluate's check of B streams cut from n characters: each must
    hold a segment of L and its targets, else what is wrong (None: they do)."""
    T = n // B
    return None if T > L else (f"{plural(B, 'stream')} of {T:,}, too short for "
                               f"segments of {L} (need > {L} per stream)")


def check_recorded(corpus: str, path: str, meta: dict, ckpt: str) -> None:
    """The text a checkpoint recorded (evaluate without --path): still there, a
    regular file, and still the text it was trained on (its training split's sha1)."""
    refuse_recorded(path, f"the text {ckpt} was trained on",
                    "(or another text) with --path FILE")
    want = meta.get("corpus_sha1")
    if corpus != "offline" or not isinstance(want, str):  # text8 checks its own
        return
    with option_names(path):
        splits = corpus_splits(corpus, path, meta.get("offline_chars", OFFLINE_CHARS))
    sha1 = sha1_tokens(CharVocab().encode(splits.train))
    if sha1 != want:
        raise UsageError(f"{path} is not the text {ckpt} was trained on any more "
                         f"(sha1 {sha1[:12]} vs {want[:12]}); give that text with "
                         f"--path FILE, or --path {typed(path)} to evaluate on this "
                         "one")
