"""Where a training step's time goes, by torch.profiler:
`python -m txl_mini bench --profile`.

The bench's ratios say how fast; this says why. One training step (forward,
backward, Adam) of each model is profiled and its time split into (op times are the
profiler's CPU-side times: wall-clock on this thread, so other processes sharing the CPU
inflate them):

- linear: every nn.Linear / F.linear matmul with its bias (projections W_q,
  [W_ke; W_v], W_kr R, W_o, the two feed-forward layers and the output softmax layer),
  forward and backward;
- attention: everything else inside the attention module, which is the part the fast
  path changes (the memory concatenation, scores (a)+(c) and (b)+(d), the shift, mask,
  softmax, probabilities x values, the layout copies), forward and backward;
- dropout (its random numbers included), layernorm, optimizer (Adam's step and
  zero_grad);
- other: embedding, loss, residual adds, ReLU, gradient accumulation, the memory update.

A backward op is charged to the forward op that created it (the profiler's sequence
number), so "attention" includes its gradients. By Amdahl's law, if the fast path made
the attention part free, the readable step could get at most
t_ref / (t_ref - attention_ref) times faster.
"""

from __future__ import annotations

from contextlib import nullcontext

from torch.profiler import ProfilerActivity, profile, record_function
from tqdm import tqdm

from ..attention import MultiHeadAttention
from .bench_train import Trainer, training_models
from .stdout import fd_2_hushed

CATEGORIES = ("linear", "attention", "dropout", "layernorm", "optimizer", "other")
_ATTN = "txl_mini.attention"  # label of the attention module's forward in the trace


def _enter_label(mod, args):
    mod._prof_label = record_function(_ATTN)
    mod._prof_label.__enter__()


def _exit_label(mod, args, out):
    mod._prof_label.__exit__(None, None, None)


def _label_attention(model) -> list:
    """Wrap every attention module's forward in a record_function label; returns the
    hooks."""
    return [hook for m in model.modules() if isinstance(m, MultiHeadAttention)
            for hook in (m.register_forward_pre_hook(_enter_label),
                         m.register_forward_hook(_exit_label))]


def _forward_category(ev) -> str:
    """Category of a forward op: from its top-level op's name and the labels above
    it."""
    chain = []
    while ev is not None:
        chain.append(ev.name)
        ev = ev.cpu_parent
    names = " ".join(chain)
    if "Optimizer." in names:
        return "optimizer"
    if "dropout" in names or "bernoulli" in names:
        return "dropout"
    if "layer_norm" in names:
        return "layernorm"
    if "aten::linear" in names:
        return "linear"
    return "attention" if _ATTN in chain else "other"


def _categorise(events) -> dict:
    """Seconds per category, from the top-level events of one profiled step."""
    # forward sequence number -> category of the op that made the autograd node
    seq = {}
    autograd_prefixes = ("autograd::", "torch::autograd")
    for ev in events:
        if ev.sequence_nr >= 0 and not ev.name.startswith(autograd_prefixes) \
                and "Backward" not in ev.name:
            seq.setdefault(ev.sequence_nr, _forward_category(ev))
    out = dict.fromkeys(CATEGORIES, 0.0)
    for ev in events:
        top = ev.cpu_parent is None or (ev.cpu_parent.name == _ATTN
                                        and ev.cpu_parent.cpu_parent is None)
        if not top or ev.name == _ATTN:
            continue  # children are in their parent's time; our labels are not ops
        cat = None
        if ev.name.startswith("autograd::engine::evaluate_function"):
            todo = list(ev.cpu_children)
            while todo and cat is None:  # the node inside carries the forward's number
                c = todo.pop(0)
                if "Backward" in c.name and c.sequence_nr >= 0:
                    cat = seq.get(c.sequence_nr)
                todo += c.cpu_children
            cat = cat or "other"  # e.g. AccumulateGrad
        else:
            cat = _forward_category(ev)
        out[cat] += ev.cpu_time_total / 1e6
    return out


def profile_step(cfg, batch: int, device, progress: bool = False) -> dict:
    """{model: {category: seconds, "step_s": traced wall seconds of the step}}.

    One training step per model of `training_models(cfg)`, after two untimed warm-up
    steps (memory full, caches and allocator settled). Meant for one thread on a CPU: on
    a GPU the CPU times would be kernel launches, not kernels.
    """
    res = {}
    for name, (model, _) in tqdm(training_models(cfg).items(), desc="profile",
                                 disable=not progress):
        # no autocast on a CPU
        tr = Trainer(model, cfg, batch, device, nullcontext, False)
        tr.step(2)
        hooks = _label_attention(tr.model)
        prof = profile(activities=[ProfilerActivity.CPU])
        with fd_2_hushed():  # its C++ says 'profiler_start' on stderr, --quiet or not
            prof.__enter__()
        try:
            tr.step()
        finally:
            with fd_2_hushed():  # and 'profiler_stop'
                prof.__exit__(None, None, None)
        for h in hooks:
            h.remove()
        events = list(prof.events())
        res[name] = _categorise(events)
        res[name]["step_s"] = (max(e.time_range.end for e in events)
                               - min(e.time_range.start for e in events)) / 1e6
    return res


def format_profile(prof: dict) -> str:
    """Shares of the traced step time per category, one row per model, and Amdahl's
    bound.

    "untraced" is step time outside every op (Python between ops, the profiler's own
    cost).
    """
    lines = ["where one training step's time goes (torch.profiler, share of the step):",
             f"{'model':<13}{'step s':>7}" + "".join(f"{c[:9]:>10}" for c in CATEGORIES)
             + f"{'untraced':>9}"]
    for name, p in prof.items():
        t = p["step_s"]
        shares = "".join(f"{p[c] / t:>10.1%}" for c in CATEGORIES)
        lines.append(f"{name:<13}{t:>7.2f}" + shares
                     + f"{1 - sum(p[c] for c in CATEGORIES) / t:>9.1%}")
    if "xl_readable" in prof:
        r = prof["xl_readable"]
        lines.append("Amdahl: with a free attention part the readable step could get "
                     "at most "
                     f"{r['step_s'] / (r['step_s'] - r['attention']):.2f}x faster")
    return "\n".join(lines)
