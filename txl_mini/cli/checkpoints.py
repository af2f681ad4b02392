"""The checkpoints the command lines read: a file or run directory opened, and the
fields train writes into it (cli/run.py) checked before anything reads one.

read_checkpoint refuses a file that is not a checkpoint; a checkpoint edited by hand
(or forged) can still hold a field of another type, e.g. meta.corpus_path = 5 or
extra.step = "5". Each such field is one line naming the file and the field, exit 2,
as a hand-edited config.json is (cli/resume.py), never a TypeError deep inside a
command. meta describes the model, so every command checks it; extra is the training
state, which only --resume reads.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields

import torch

from ..checkpoint import (
    CheckpointError,
    CheckpointUnreadable,
    build_model,
    read_checkpoint,
)
from ..config import ModelConfig
from ..corpus import BOOK_CORPORA
from ..model import TransformerXL, VanillaTransformer
from .kinds import not_regular
from .options import UsageError, pick_device, set_threads
from .paths import expand, refuse_dangling, refuse_loop, refuse_stdin
from .saved import run_checkpoint
from .settings import MAX_DISTANCE

NoneType = type(None)
# meta's fields a command reads (evaluate: the corpus to rebuild), their types and
# what each is; absent is fine (the chapters' checkpoints record other things)
META = {"corpus": ((str, dict), "a corpus name or record"),
        "corpus_path": ((str, NoneType), "a file path or null"),
        "offline_chars": (int, "a number of characters")}
# extra's fields, as Run.save writes them; val_pending is absent from older runs
EXTRA = {"step": (int, "a step count"), "pos": (int, "a position in the streams"),
         "best": ((int, float, NoneType), "a bpc or null"),
         "val_pending": (bool, "true or false"),
         "ranks": (list, "a list of each process' state")}
# a config field's type, by its annotation, as the message names it (ints are floats)
TYPES = {"int": (int, "an integer"), "float": ((int, float), "a number"),
         "str": (str, "a string"), "bool": (bool, "true or false")}


def corpus_name(corpus):
    """meta's corpus as its name: the book's checkpoints record their corpus'
    generator settings, one of BOOK_CORPORA's; other records are returned as they
    are."""
    if isinstance(corpus, dict):
        same = json.loads(json.dumps(corpus))  # tuples as lists, as in BOOK_CORPORA
        return next((n for n, c in BOOK_CORPORA.items() if c == same), corpus)
    return corpus


def open_checkpoint(args) -> tuple:
    """evaluate's and sample's --threads, --device and checkpoint, in that order:
    (model, meta, path, device). A run directory stands for its best.pt (else
    last.pt). A file that is no checkpoint is bad input (exit 2), one this process
    may not read is not (exit 1)."""
    set_threads(args.threads)
    device = pick_device(args.device)
    path = expand(args.checkpoint)  # `~/r`: quoted, or after '='
    refuse_stdin(path, "checkpoint")
    refuse_loop(path, "a checkpoint")  # else 'no such checkpoint file'
    refuse_dangling(path, "a checkpoint")
    run_dir = path if os.path.isdir(path) else None
    path = run_checkpoint(run_dir) if run_dir else path
    what = not_regular(path)  # else 'empty file (0 bytes)'; a FIFO is not opened
    if what:
        raise UsageError(f"{path} is {what}, not a checkpoint file")
    try:
        ckpt = read_checkpoint(path, device)
        check_meta(ckpt["meta"], path)
        check_weights(ckpt, path)  # before the model is built: its size, its tensors
        model = build_model(ckpt, path, device)
    except CheckpointUnreadable:  # 'cannot read PATH: Permission denied': exit 1
        raise
    except CheckpointError as e:  # missing, empty, not one, damaged: bad input
        raise UsageError(str(e)) from None
    return model, ckpt["meta"], path, device


def read_input(path: str, device) -> dict:
    """read_checkpoint, its weights checked against its config (shapes and kinds by
    check_weights, then a model built on the CPU and dropped), where a file that is
    not a checkpoint (damaged, cut short, holding code, weights of another shape) is
    bad input, exit 2, as evaluate's is; one this process may not read is not
    (CheckpointUnreadable: exit 1)."""
    try:
        ckpt = read_checkpoint(path, device)
        check_weights(ckpt, path)  # first: a config of 10**9 heads is never built
        build_model(ckpt, path)
        return ckpt
    except CheckpointUnreadable:
        raise
    except CheckpointError as e:
        raise UsageError(str(e)) from None


def _is(value, types) -> bool:
    """isinstance, except that True and False are not numbers."""
    types = types if isinstance(types, tuple) else (types,)
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _wrong(path: str, field: str, value, what: str) -> UsageError:
    if not isinstance(value, (str, int, float, bool, NoneType)):  # a tensor, a list
        return UsageError(f"{path} has {field} that is not {what}")
    shown = json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return UsageError(f"{path} has {field} = {shown}, not {what}")


def _json(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def check_meta(meta: dict, path: str) -> None:
    """The meta fields a command reads, each of its type (or absent)."""
    for key, (types, what) in META.items():
        v = meta.get(key)
        if key in meta and not (_is(v, types) and _json(v)):  # a record: JSON data
            raise _wrong(path, f"meta.{key}", v, what)


def check_weights(ckpt: dict, path: str) -> None:
    """config's field types and distances, then each weight against the shape and
    dtype the config gives it, from a model built on the meta device (shapes only,
    nothing allocated, no init): a config of 10**9 heads allocated 512 GB before
    its weights were compared, a sparse weight failed in load_state_dict's copy."""
    raw, state = ckpt["config"], ckpt["state_dict"]
    if not (isinstance(raw, dict) and isinstance(state, dict)):
        return  # build_model names what they are
    for f in fields(ModelConfig):
        types, what = TYPES[f.type]
        if f.name in raw and not _is(raw[f.name], types):
            raise _wrong(path, f"config.{f.name}", raw[f.name], what)
    try:
        cfg = ModelConfig(**raw)
    except (TypeError, ValueError):  # an unknown field, a value out of range:
        return  # build_model's 'invalid config' line
    for name in ("clamp_len", "shaw_clip", "seg_len", "mem_len"):  # train's caps;
        if getattr(cfg, name) > MAX_DISTANCE:  # mem_len=10**12: sample's OOM
            raise _wrong(path, f"config.{name}", getattr(cfg, name),
                         f"a distance <= {MAX_DISTANCE:,} (as train allows)")
    layers = {k.split(".")[1] for k in state if str(k).startswith("blocks.")}
    if cfg.n_layer != len(layers):  # checked first: a block per layer is built
        raise UsageError(f"{path}: weights do not match the stored config: "
                         f"config.n_layer = {cfg.n_layer:,}, weights of "
                         f"{len(layers):,} layers")
    vanilla = ckpt["model_class"] == "VanillaTransformer"
    with torch.device("meta"), _NoInit():
        want = (VanillaTransformer if vanilla else TransformerXL)(cfg).state_dict()
    for name, t in state.items():
        w = want.get(name)
        if w is None or not isinstance(t, torch.Tensor):
            continue  # build_model's 'weights do not match' line
        if t.layout != torch.strided or t.is_quantized or t.is_meta:
            kind = "quantized" if t.is_quantized else "meta" if t.is_meta else (
                str(t.layout).removeprefix("torch."))
            raise UsageError(f"{path} has state_dict[{name!r}] that is a {kind} "
                             "tensor, not a dense one")
        if t.shape != w.shape:
            raise UsageError(f"{path}: weights do not match the stored config: "
                             f"{name} is {tuple(t.shape)} in the file, "
                             f"{tuple(w.shape)} for the config")
        if (t.is_floating_point() != w.is_floating_point()
                or not w.is_floating_point() and t.dtype != w.dtype):
            kind = "floating point" if w.is_floating_point() else str(w.dtype)
            raise UsageError(f"{path} has state_dict[{name!r}] of dtype {t.dtype}, "
                             f"not {kind}")


class _NoInit(torch.overrides.TorchFunctionMode):
    """nn.init's fills skipped: on the meta device they import torch._dynamo (2 s
    and 70 MiB more on each evaluate, sample and --resume of even a tiny run)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs["tensor"]  # the tensor, unfilled
        return func(*args, **(kwargs or {}))


def check_state(ckpt: dict, path: str, batch_size: int) -> dict:
    """last.pt's training state (extra and the optimizer), as Run.save writes it for
    `batch_size` streams over len(ranks) processes; returns extra."""
    extra = ckpt["extra"]
    for key, (types, what) in EXTRA.items():
        v = extra.get(key)
        if key not in extra and key != "val_pending":
            raise UsageError(f"{path} has no extra.{key} ({what})")
        bad = not _is(v, types) or (isinstance(v, (int, float)) and v < 0)
        if key in extra and (bad or v == []):
            raise _wrong(path, f"extra.{key}", v, what)
    try:
        cfg = ModelConfig(**ckpt["config"])
    except (TypeError, ValueError) as e:
        raise UsageError(f"{path}: invalid config: {e}") from None
    ranks = extra["ranks"]
    B = batch_size // max(len(ranks), 1)  # the streams of one process
    mems = (f"a list of {cfg.n_layer} tensors (B, M, C) = ({B}, <= {cfg.mem_len}, "
            f"{cfg.d_model}), one per layer, or none")
    for i, rank in enumerate(ranks):
        where = f"extra.ranks[{i}]"
        if not isinstance(rank, dict):
            raise _wrong(path, where, rank, "a process' state")
        for key, what, ok in (("mems", mems, _mems_fit), ("rng", "a random-number "
                              "state (torch.get_rng_state's bytes)", _rng_fits)):
            if key not in rank:
                raise UsageError(f"{path} has no {where}.{key} ({what})")
            if not ok(rank[key], cfg, B):
                raise _wrong(path, f"{where}.{key}", rank[key], what)
    opt = ckpt.get("optimizer")
    if not (isinstance(opt, dict) and isinstance(opt.get("state"), dict)
            and isinstance(opt.get("param_groups"), list)
            and all(isinstance(g, dict) and isinstance(g.get("params"), list)
                    for g in opt["param_groups"])):
        raise _wrong(path, "optimizer", opt, "Adam's state (state, param_groups)")
    return extra


def _mems_fit(mems, cfg: ModelConfig, B: int) -> bool:
    """The memory one process carries: none, or a (B, M <= mem_len, C) per layer."""
    return isinstance(mems, list) and len(mems) in (0, cfg.n_layer) and all(
        isinstance(m, torch.Tensor) and m.dim() == 3 and m.shape[0] == B
        and m.shape[1] <= cfg.mem_len and m.shape[2] == cfg.d_model for m in mems)


def _rng_fits(rng, cfg, B) -> bool:
    """torch.set_rng_state takes exactly what torch.get_rng_state gives."""
    want = torch.get_rng_state()
    return (isinstance(rng, dict) and isinstance(rng.get("torch"), torch.Tensor)
            and rng["torch"].dtype == want.dtype and rng["torch"].shape == want.shape
            and all(isinstance(v, torch.Tensor) for v in rng.values()))
