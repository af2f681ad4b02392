"""Generation with the memory cache: one position per new character.

    python -m txl_mini sample runs/xl.pt --prompt "the king said " --chars 300 --top-k 5

Transformer-XL reads the prompt once, keeps every layer's projected keys and values
(txl_mini.kv_cache), and then pushes each new character through the network as a segment
of length 1 (L = 1) attending to them: one position is projected per character, however
long the context; only the attention itself grows with it. The
vanilla model has no memory, so each new character re-runs the whole window of its last
`seg_len` characters, the same recomputation that makes its evaluation slow (Table 9,
`txl_mini.speed`).

Shapes: B batch (1 here), L segment length, M memory length, V vocab.
"""

from __future__ import annotations

if __name__ == "__main__":  # run as a file, before its imports fail: say where to go
    raise SystemExit("use: python -m txl_mini sample ...")

import time
from typing import Callable, Optional

import torch

from .kv_cache import forward_cached
from .model import TransformerXL, VanillaTransformer


def sample_next(logits: torch.Tensor, temperature: float = 1.0,
                top_k: Optional[int] = None,
                generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Draw one id per row from logits (B, V) -> (B,).

    temperature 0 means greedy (argmax); below 1 sharpens, above 1 flattens the
    distribution. top_k keeps only the k most likely ids before drawing.
    """
    if not temperature >= 0 or temperature == float("inf"):  # NaN fails >= too
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    logits = logits.float()
    if torch.isnan(logits).any():
        raise ValueError("the model's logits are NaN: its weights are broken")
    if temperature == 0:
        return logits.argmax(dim=-1)  # (B,)
    scaled = logits / temperature
    if not torch.isfinite(scaled).all():
        # T so small that logits / T overflow (1e-38 in float32; 1e-300 is 0 there):
        # the limit of T -> 0, greedy, as for 0 itself
        return logits.argmax(dim=-1)  # (B,)
    logits = scaled
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]  # (B, 1) the k-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)  # (B,)


@torch.inference_mode()
def generate(model, prompt: torch.Tensor, n_chars: int, *, temperature: float = 1.0,
             top_k: Optional[int] = None, generator: Optional[torch.Generator] = None,
             use_cache: bool = True, mem_len: Optional[int] = None,
             context: Optional[int] = None,
             on_token: Optional[Callable[[int], None]] = None,
             return_logits: bool = False):
    """Continue `prompt` (P,) ids by `n_chars` sampled ids -> the new ids (n_chars,).

    use_cache=True (TransformerXL only): the prompt runs once in segments of the model's
    seg_len, then every new character is ONE position attending to the cached keys and
    values of the last `mem_len` positions per layer (txl_mini.kv_cache; default M + L
    of the model: the context its last training position saw). use_cache=False re-runs
    the window of the last `context` characters (default the model's seg_len) for every
    new character, as the vanilla model must. `on_token(id)` is called as each
    character is drawn (streaming). return_logits=True also returns the logits each
    character was drawn from, (n_chars, V), for checking the cache against re-running.
    """
    if prompt.dim() != 1 or prompt.numel() < 1:
        raise ValueError("prompt must be a non-empty 1-D tensor of ids")
    if n_chars < 0:
        raise ValueError(f"n_chars must be >= 0, got {n_chars}")
    model.eval()
    cfg = model.cfg
    device = next(model.parameters()).device
    ids = prompt.to(device)[None]  # (1, P)
    out_ids, drawn_from = [], []
    if use_cache:
        if (isinstance(model, VanillaTransformer)
                or not isinstance(model, TransformerXL)):
            raise ValueError("use_cache=True needs a TransformerXL; the vanilla model "
                             "has no memory")
        M = mem_len if mem_len is not None else cfg.mem_len + cfg.seg_len
        cache, logits = None, None
        for start in range(0, ids.shape[1], cfg.seg_len):  # the prompt, by segments
            out = forward_cached(model, ids[:, start:start + cfg.seg_len], cache,
                                 mem_len=M)
            cache, logits = out.cache, out.logits[:, -1]  # (1, V) the next character
        for _ in range(n_chars):
            if return_logits:  # else kept for nothing: ~0.65 kB a character
                drawn_from.append(logits[0].float().cpu())
            nxt = sample_next(logits, temperature, top_k, generator)  # (1,)
            out_ids.append(int(nxt))
            if on_token:
                on_token(int(nxt))
            # L = 1: one new position, its key and value projected once
            out = forward_cached(model, nxt[:, None], cache, mem_len=M)
            cache, logits = out.cache, out.logits[:, -1]
    else:
        W = context or cfg.seg_len
        for _ in range(n_chars):
            logits = model(ids[:, -W:]).logits[:, -1]  # the whole window, again
            if return_logits:
                drawn_from.append(logits[0].float().cpu())
            nxt = sample_next(logits, temperature, top_k, generator)
            out_ids.append(int(nxt))
            if on_token:
                on_token(int(nxt))
            # only the next window is read: the whole history was copied every step
            ids = torch.cat([ids, nxt[:, None]], dim=1)[:, -W:]  # (1, <= W)
    new = torch.tensor(out_ids, dtype=torch.long)  # (n_chars,)
    if return_logits:
        V = cfg.vocab_size
        return new, torch.stack(drawn_from) if drawn_from else torch.empty(0, V)
    return new


def time_per_char(model, prompt: torch.Tensor, n_chars: int,
                  clock: Callable[[], float] = time.perf_counter, **kwargs) -> float:
    """Seconds per character of generate(model, prompt, n_chars, **kwargs).

    Includes reading the prompt, so use a long n_chars for the cached path. `clock`:
    wall time, or `time.thread_time` for this thread's CPU time (one torch thread),
    which other processes on a busy machine do not stretch.
    """
    start = clock()
    generate(model, prompt, n_chars, **kwargs)
    return (clock() - start) / max(1, n_chars)
