"""Checkpoints: one file holds a model's config, weights and plain metadata.

    save_checkpoint("runs/xl/last.pt", model, {"corpus": "offline"}, optimizer=opt)
    model, meta = load_checkpoint("runs/xl/last.pt")

Safety rules, each for a reason:
- Only tensors and plain data (dict, list, tuple, str, int, float, bool, None) are
  stored, and files are read with `torch.load(..., weights_only=True)`, so loading a
  file never runs code from it (full unpickling can execute arbitrary commands).
- Writes are atomic (`files.atomic_path`): a crash mid-write leaves the previous
  checkpoint intact, never a half file.
- Every way a file can be wrong (empty, truncated, foreign, weights that do not fit the
  stored config, no meta) becomes one `CheckpointError` line naming the file and the
  problem.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from dataclasses import asdict, fields
from typing import Any, Optional

import torch

from .config import ModelConfig
from .files import ANY, atomic_path, no_folder_at, too_long_to_read
from .torch_env import named_in

FORMAT = "txl_mini.checkpoint"  # marks a file as ours
VERSION = 2  # 2: the feed-forward's layers are named ff.c_fc, ff.c_proj
# version 1 wrote the feed-forward as an nn.Sequential: its layers by index
_V1_NAMES = {".ff.net.0.": ".ff.c_fc.", ".ff.net.3.": ".ff.c_proj."}
MODEL_CLASSES = ("TransformerXL", "VanillaTransformer")
_PLAIN = (type(None), bool, int, float, str, bytes, torch.Tensor, torch.Size)


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message names the file and why."""


class CheckpointNotFound(CheckpointError, FileNotFoundError):
    """No file at the path (also a FileNotFoundError, for callers catching OSError)."""


class CheckpointUnreadable(CheckpointError):
    """A file there that this process may not read (its permissions); the message,
    `cannot read PATH: Permission denied`, blames the access, not the file."""


def _check_plain(obj: Any, where: str) -> None:
    """TypeError unless obj is only tensors and plain data (what weights_only loads)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"{where}: key {k!r} is not a str or int")
            _check_plain(v, f"{where}[{k!r}]")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _check_plain(v, f"{where}[{i}]")
    elif not isinstance(obj, _PLAIN):
        raise TypeError(f"{where} is a {type(obj).__name__}; checkpoints hold only "
                        "tensors and plain data (dict, list, tuple, str, int, float, "
                        "bool, None)")


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The model inside DistributedDataParallel (.module) or torch.compile
    (._orig_mod)."""
    while True:
        inner = getattr(model, "module", None) or getattr(model, "_orig_mod", None)
        if not isinstance(inner, torch.nn.Module):
            return model
        model = inner


def save_checkpoint(path: str, model: torch.nn.Module, meta: dict,
                    optimizer: Optional[torch.optim.Optimizer] = None,
                    extra: Optional[dict] = None, was=ANY) -> None:
    """Write config, weights, `meta` (and optimizer state, `extra`) to `path`,
    atomically.

    `meta` describes the model (corpus, preset, steps...); `extra` holds anything a
    resumed run needs (RNG states, data position, memory). Both must be plain data and
    tensors: TypeError otherwise, before anything is written. `was`: atomic_path's.
    """
    model = unwrap(model)
    if type(model).__name__ not in MODEL_CLASSES:
        raise TypeError(f"can only checkpoint {' or '.join(MODEL_CLASSES)}, "
                        f"not {type(model).__name__}")
    if not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict, not {type(meta).__name__}")
    payload = {
        "format": FORMAT, "version": VERSION, "model_class": type(model).__name__,
        "config": asdict(model.cfg), "state_dict": model.state_dict(), "meta": meta,
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "extra": extra,
    }
    _check_plain({k: v for k, v in payload.items() if k != "state_dict"}, "checkpoint")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path, was) as tmp:
        try:
            with open(tmp, "wb") as f:  # a file object: a full disk surfaces as OSError
                torch.save(payload, f)
        except RuntimeError as e:  # torch's writer wraps the OSError ("enforce fail")
            cause = e.__context__
            if not isinstance(cause, OSError):
                raise
            raise OSError(cause.errno, cause.strerror, os.fspath(path)) from None


def _missing(path: str) -> str:
    """Why `path` is not there: no folder where it names one (`best.pt/`, or
    `notes.txt/x.pt`: files.no_folder_at), a name too long for any file (not 'no
    such file': none can be there), else no such file."""
    why = too_long_to_read(path) or no_folder_at(path)  # lengths: as --out's are
    return f"{path}: {why or 'no such checkpoint file'}"


def read_checkpoint(path: str, device=None) -> dict:
    """The validated raw contents of a checkpoint (dict with config, state_dict, meta,
    optimizer, extra), tensors mapped to `device` (default CPU). Raises
    CheckpointError."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CheckpointNotFound(_missing(path))
    if os.path.isdir(path):
        raise CheckpointError(f"{path}: is a directory, not a checkpoint file")
    size = os.path.getsize(path)
    if size == 0:
        raise CheckpointError(f"{path}: empty file (0 bytes), not a checkpoint")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as e:  # no read permission: the file may be fine
        raise CheckpointUnreadable(f"cannot read {path}: {e.strerror}") from None
    if head != b"PK\x03\x04":  # torch.save writes a zip archive
        raise CheckpointError(
            f"{path}: not a txl_mini checkpoint (not a PyTorch zip file)")
    try:
        ckpt = torch.load(path, map_location=device or "cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        if "weights only" in str(e).lower() or "weights_only" in str(e).lower():
            raise CheckpointError(
                f"{path}: holds objects other than tensors and plain data; refusing "
                "to unpickle it (weights_only=True)") from None
        raise CheckpointError(
            f"{path}: corrupt ({type(e).__name__} while unpickling)") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as e:
        # torch refused a setting (TORCH_FORCE_WEIGHTS_ONLY_LOAD and ..._NO_...): the
        # file is not at fault; it was called corrupt, and a good one may be deleted
        named = named_in(str(e))
        if named:
            raise CheckpointError(
                f"cannot load {path}: torch refused {', '.join(named)} in the "
                f"environment ({e}); fix or unset it") from None
        # began as a torch zip archive, then broke off (or was damaged)
        raise CheckpointError(f"{path}: truncated or corrupt ({size:,} bytes; "
                              "cannot read the archive)") from None
    if not isinstance(ckpt, dict) or not {"config", "state_dict"} <= set(ckpt):
        raise CheckpointError(
            f"{path}: not a txl_mini checkpoint (no config and weights in it)")
    if ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a txl_mini checkpoint "
                              f"(format {ckpt.get('format')!r})")
    if ckpt.get("model_class") not in MODEL_CLASSES:
        raise CheckpointError(
            f"{path}: unknown model class {ckpt.get('model_class')!r}")
    if not isinstance(ckpt.get("meta"), dict):
        raise CheckpointError(f"{path}: missing meta (a dict describing the run)")
    version = ckpt.get("version", 1)
    if not isinstance(version, int) or not 1 <= version <= VERSION:
        raise CheckpointError(f"{path}: format version {version!r}; this txl_mini "
                              f"reads versions 1 to {VERSION}")
    if version == 1 and isinstance(ckpt["state_dict"], dict):
        ckpt["state_dict"] = upgrade_state_dict(ckpt["state_dict"])
    return ckpt


def upgrade_state_dict(state: dict) -> dict:
    """A version-1 state dict with version-2 names: blocks.N.ff.net.0 -> ff.c_fc,
    blocks.N.ff.net.3 -> ff.c_proj; every tensor, and the order, unchanged."""
    def rename(key: str) -> str:
        for old, new in _V1_NAMES.items():
            if old in key:
                return key.replace(old, new)
        return key
    return {rename(k): v for k, v in state.items()}


def _config(path: str, raw) -> ModelConfig:
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path}: config is a {type(raw).__name__}, not a dict")
    unknown = set(raw) - {f.name for f in fields(ModelConfig)}
    if unknown:
        raise CheckpointError(f"{path}: config has unknown fields {sorted(unknown)}")
    try:
        return ModelConfig(**raw)  # fields added later take their defaults
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid config: {e}") from None


def build_model(ckpt: dict, path: str = "checkpoint", device=None) -> torch.nn.Module:
    """The model a checkpoint describes, with its weights, in eval mode on `device`."""
    from .model import TransformerXL, VanillaTransformer

    vanilla = ckpt["model_class"] == "VanillaTransformer"
    cls = VanillaTransformer if vanilla else TransformerXL
    model = cls(_config(path, ckpt["config"]))
    state = ckpt["state_dict"]
    if not isinstance(state, dict):
        raise CheckpointError(
            f"{path}: weights are a {type(state).__name__}, not a state dict")
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: weights do not match the stored config: "
                              f"{len(missing)} missing (e.g. {missing[:2]}), "
                              f"{len(unexpected)} unexpected (e.g. {unexpected[:2]})")
    for name, t in state.items():
        if not isinstance(t, torch.Tensor) or t.shape != expected[name].shape:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            want = tuple(expected[name].shape)
            raise CheckpointError(
                f"{path}: weights do not match the stored config: {name} is {got} in "
                f"the file, {want} for the config")
    float_dtypes = {t.dtype for t in state.values() if t.is_floating_point()}
    if len(float_dtypes) == 1:  # a float64 (chapters) or bf16 model keeps its dtype
        model.to(float_dtypes.pop())
    model.load_state_dict(state)
    return model.to(device or "cpu").eval()


def load_checkpoint(path: str, device=None):
    """(model in eval mode, meta) from a file written by save_checkpoint;
    CheckpointError if the file is missing, empty, truncated, foreign, or its weights
    do not fit its config."""
    ckpt = read_checkpoint(path, device)
    return build_model(ckpt, os.fspath(path), device), ckpt["meta"]
