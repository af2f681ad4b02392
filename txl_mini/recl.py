"""Relative Effective Context Length, RECL (Dai et al., 2019, Appendix).

How far back does a model really look? Measure its loss l_i(c, t) on the same targets t
for several context lengths c, then ask how long a longer context keeps paying off,
counting only gains over the best short-context loss of a whole group of models:

    b(c, t)     = min_i l_i(c, t)                          the group's baseline
    T           = the top-r fraction of targets t by b(c, t)  (the hard positions)
    f_i(c, c')  = 1/|T| sum_{t in T} min(b(c, t), l_i(c', t))
    g_i(c, c')  = (exp f_i(c, c) - exp f_i(c, c')) / exp f_i(c, c)
    RECL_i      = greedy walk c -> c + Delta while g_i(c, c + Delta) >= threshold (0.01)

`losses` everywhere is {model name: {context length c: per-target nats (T,)}}.
"""

from __future__ import annotations

import math
from typing import Dict, Mapping, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from tqdm import tqdm

Losses = Mapping[str, Mapping[int, torch.Tensor]]


class Recl(NamedTuple):
    """RECL of one model. `lower_bound`: the walk hit the largest measured
    context, so the true RECL may be longer than `context`."""

    context: int
    lower_bound: bool


# --------------------------------------------------------------------------------------
# Measuring l(c, t)
# --------------------------------------------------------------------------------------

def _window_nats(model, windows: torch.Tensor, n_scored: int) -> torch.Tensor:
    """Nats of the last n_scored targets of each window (b, W+1) -> (b, n_scored)."""
    x, y = windows[:, :-1], windows[:, -n_scored:]  # x (b, W)
    cfg = model.cfg
    if cfg.mem_len == 0:  # no recurrence: the window is one segment (sliding window)
        logits = model(x).logits[:, -n_scored:]  # (b, n_scored, V)
    else:
        # As trained: segments of L carrying memory M. Cut from the end, so that the
        # last segment is a full one and only the first may be short.
        L, W = cfg.seg_len, x.shape[1]
        cuts = [0] + list(range(W % L or L, W + 1, L)) if W > L else [0, W]
        mems, outs = None, []
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            out = model(x[:, lo:hi], mems=mems)
            mems, logits = out.mems, out.logits
            outs.append(logits)
        logits = torch.cat(outs, dim=1)[:, -n_scored:]
    return F.cross_entropy(logits.transpose(1, 2), y, reduction="none").double().cpu()


@torch.no_grad()
def loss_table(model, tokens: torch.Tensor, contexts: Sequence[int], *,
               n_targets: int = None, stride: int = 1, batch_size: int = 64,
               max_window: int = None, progress: bool = False
               ) -> Dict[int, torch.Tensor]:
    """{c: per-target nats (T,)} with the history cut to c characters.

    Targets are tokens[s], tokens[s+1], ... tokens[s+T-1] with s = max(contexts): the
    same targets for every c (and every model given the same arguments), and every one
    of them has at least max(contexts) characters behind it in `tokens`. Entry k of each
    tensor is the loss of predicting tokens[s + k].

    The model sees a window of history that starts from nothing (empty memory, no
    earlier state), so no information older than the window can leak in:
    * without memory (cfg.mem_len == 0, vanilla or relative-only) the window is one
      segment: the sliding-window evaluation with window c;
    * with memory the window is read the way the model was trained, in segments of L
      carrying memory M; every target still sees only the characters of its window,
      through whatever mix of current segment and memory the layout gives it.
    `max_window` caps the window of a model *without* memory (e.g. at its training L:
    the absolute positions of a vanilla model beyond L were never trained); larger c
    reuse it. `stride` trades exactness for time: one window of c characters scores its
    last `stride` targets, so they see c - stride + 1 ... c characters (never more than
    c; stride <= the smallest context). stride=1 is exact. Cost: about T / stride * c
    positions for each c. Losses are float64 (T,) tensors.
    """
    contexts = sorted(int(c) for c in contexts)
    if not contexts or contexts[0] < 1:
        raise ValueError(f"contexts must be positive context lengths, got {contexts}")
    if not 1 <= stride <= contexts[0]:
        raise ValueError(f"stride must be in 1 ... smallest context ({contexts[0]}), "
                         f"got {stride}")
    tokens = torch.as_tensor(tokens).reshape(-1)
    start = contexts[-1]
    available = tokens.shape[0] - start
    T = available if n_targets is None else n_targets
    if T < 1 or T > available:
        raise ValueError(f"need {start} + n_targets tokens (largest context plus "
                         f"targets); got {tokens.shape[0]} tokens for "
                         f"n_targets={n_targets}")
    model.eval()
    device = next(model.parameters()).device
    tokens = tokens.to(device)
    table = {}
    n_full = T // stride  # windows scoring `stride` targets; a last one scores the rest
    firsts = torch.arange(start, start + n_full * stride, stride, device=device)
    groups = [(firsts, stride)]
    if T % stride:
        last = torch.tensor([start + n_full * stride], device=device)
        groups.append((last, T % stride))
    no_memory = model.cfg.mem_len == 0
    for c in tqdm(contexts, disable=not progress, desc="contexts"):
        # w: characters of history
        w = min(c, max_window) if (no_memory and max_window) else c
        nats = torch.full((T,), float("nan"), dtype=torch.float64)
        for firsts, k in groups:  # firsts: (n,) first target of each window
            for lo in range(0, len(firsts), batch_size):
                f = firsts[lo:lo + batch_size]  # (b,)
                # the last target t0 + k - 1 sees exactly w characters, the first
                # w - k + 1
                span = torch.arange(w + 1, device=device)
                idx = f[:, None] + k - 1 - w + span  # (b, w + 1)
                out = _window_nats(model, tokens[idx], k)  # (b, k)
                pos = (f - start)[:, None].cpu() + torch.arange(k)  # (b, k)
                nats[pos.reshape(-1)] = out.reshape(-1)
        assert not torch.isnan(nats).any(), "every target is scored exactly once"
        table[c] = nats
    return table


# --------------------------------------------------------------------------------------
# RECL from a loss table
# --------------------------------------------------------------------------------------

def check_losses(losses: Losses) -> list:
    """Validate a group's loss table; return its sorted contexts (else ValueError)."""
    if not losses:
        raise ValueError("losses is empty: need at least one model")
    names = list(losses)
    contexts = sorted(losses[names[0]])
    if not contexts:
        raise ValueError(f"model {names[0]!r} has no contexts")
    shape = None
    for name in names:
        if sorted(losses[name]) != contexts:
            raise ValueError(f"model {name!r} has contexts {sorted(losses[name])}, "
                             f"but {names[0]!r} has {contexts}: every model needs the "
                             "same ones")
        for c in contexts:
            x = losses[name][c]
            if not isinstance(x, torch.Tensor) or x.dim() != 1 or x.numel() == 0:
                raise ValueError(
                    f"losses[{name!r}][{c}] must be a non-empty 1-D tensor (T,)")
            if shape is None:
                shape = x.shape
            elif x.shape != shape:
                raise ValueError(
                    f"losses[{name!r}][{c}] has shape {tuple(x.shape)}, expected "
                    f"{tuple(shape)}: every model and context must score the same "
                    "targets")
            if torch.isnan(x).any():
                raise ValueError(f"losses[{name!r}][{c}] contains NaN")
    steps = {b - a for a, b in zip(contexts, contexts[1:])}
    if len(steps) > 1:
        raise ValueError("contexts must be evenly spaced (Delta is their spacing), "
                         f"got {contexts}")
    return contexts


def _top(b: torch.Tensor, r: float) -> torch.Tensor:
    """Indices of T: the ceil(r * T) targets with the largest baseline loss."""
    if not 0.0 < r <= 1.0:
        raise ValueError(f"r must be in (0, 1], got {r}")
    k = max(1, math.ceil(r * b.numel()))
    return torch.topk(b.double(), k).indices


def relative_loss(losses: Losses, name: str, c: int, c2: int, r: float = 1.0) -> float:
    """f_i(c, c'): loss at c' on the hard targets, never worse than the baseline."""
    check_losses(losses)
    if name not in losses:
        raise ValueError(f"unknown model {name!r}; the group has {list(losses)}")
    for ctx in (c, c2):
        if ctx not in losses[name]:
            raise ValueError(f"context {ctx} was not measured; "
                             f"have {sorted(losses[name])}")
    # b(c, t): the group's best loss at the short context, (T,)
    b = torch.stack([m[c].double() for m in losses.values()]).min(dim=0).values
    T = _top(b, r)
    return torch.minimum(b[T], losses[name][c2].double()[T]).mean().item()


def relative_gain(losses: Losses, name: str, c: int, c2: int, r: float = 1.0) -> float:
    """g_i(c, c'): relative perplexity drop from c to c', over the baseline."""
    f_cc = relative_loss(losses, name, c, c, r)
    f_cc2 = relative_loss(losses, name, c, c2, r)
    return (math.exp(f_cc) - math.exp(f_cc2)) / math.exp(f_cc)


def recl(losses: Losses, r: float = 1.0, threshold: float = 0.01) -> Dict[str, Recl]:
    """{model name: Recl(context, lower_bound)}: the paper's greedy walk.

    Start at the smallest context c; while g_i(c, c + Delta) >= threshold, move to
    c + Delta.
    A walk that reaches the largest measured context is flagged `lower_bound=True`.
    """
    contexts = check_losses(losses)
    result = {}
    for name in losses:
        i = 0
        while i + 1 < len(contexts):
            if relative_gain(losses, name, contexts[i], contexts[i + 1], r) < threshold:
                break
            i += 1
        result[name] = Recl(contexts[i], i == len(contexts) - 1)
    return result
