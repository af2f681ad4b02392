"""RECL (txl_mini.recl): loss tables whose RECL is known by construction."""

import math

import pytest
import torch

from txl_mini.config import preset
from txl_mini.model import TransformerXL, VanillaTransformer
from txl_mini.recl import Recl, check_losses, loss_table, recl, relative_gain

CONTEXTS = list(range(100, 1001, 100))  # Delta = 100, as in the paper


def table(curve, T=50):
    """{c: (T,) nats}: every target has loss curve(c)."""
    return {c: torch.full((T,), float(curve(c))) for c in CONTEXTS}


def test_improves_until_300_then_flat():
    # 2.0 nats at 100, 1.5 at 200, 1.0 at 300, flat after: the walk stops at 300
    losses = {"m": table(lambda c: max(1.0, 2.5 - c / 200))}
    assert recl(losses) == {"m": Recl(300, False)}
    assert relative_gain(losses, "m", 100, 200) == pytest.approx(1 - math.exp(-0.5))
    assert relative_gain(losses, "m", 300, 400) == 0.0


def test_keeps_improving_is_a_lower_bound():
    losses = {"m": table(lambda c: 3.0 - c / 1000)}
    assert recl(losses) == {"m": Recl(1000, True)}


def test_only_gains_over_the_group_baseline_count():
    # "good" is better everywhere and flattens at 300; "weak" improves until 700, but
    # its loss at 200 is still above good's at 100, so its first step gains nothing and
    # its walk stops.
    good = table(lambda c: max(1.0, 2.0 - c / 300))  # 1.667 at 100, 1.0 from 300 on
    weak = table(lambda c: 3.0 - min(c, 700) / 400)  # 2.75 at 100 ... 1.25 from 700 on
    losses = {"good": good, "weak": weak}
    assert recl(losses) == {"good": Recl(300, False), "weak": Recl(100, False)}
    # alone, weak's own gains would give 700
    assert recl({"weak": weak}) == {"weak": Recl(700, False)}
    # the gain is measured against the group's best loss at the short context
    assert relative_gain(losses, "weak", 100, 200) == 0.0


def test_r_selects_the_hard_positions():
    # 10 hard targets keep improving until 600, 90 easy ones only until 200
    T = 100

    def curve(c):
        x = torch.full((T,), max(0.5, 1.0 - c / 400))  # easy: flat from 200
        x[:10] = 5.0 - min(c, 600) / 200  # hard: flat from 600
        return x

    losses = {"m": {c: curve(c) for c in CONTEXTS}}
    assert recl(losses, r=0.1) == {"m": Recl(600, False)}
    # with r = 1 the hard targets still dominate the mean, so the walk also goes to 600;
    # without them (easy targets only) it stops at 200
    easy = {"m": {c: curve(c)[10:] for c in CONTEXTS}}
    assert recl(easy, r=1.0) == {"m": Recl(200, False)}
    # r selects by the baseline at the short context: the top 10% are exactly the
    # hard ones
    only_easy_gains = {"m": {c: torch.cat([torch.full((10,), 5.0), curve(c)[10:]])
                             for c in CONTEXTS}}
    assert recl(only_easy_gains, r=0.1) == {"m": Recl(100, False)}
    assert recl(only_easy_gains, r=1.0)["m"].context == 200


def test_threshold_edge():
    # a gain of exactly 1% continues the walk (>=), just below stops it
    g = 0.01
    up = {100: 1.0, 200: 1.0 + math.log(1 - g)}  # exp f drops by exactly 1%
    down = {100: 1.0, 200: 1.0 + math.log(1 - g + 1e-6)}
    contexts = [100, 200]
    at = {"m": {c: torch.full((4,), up[c], dtype=torch.float64) for c in contexts}}
    below = {"m": {c: torch.full((4,), down[c], dtype=torch.float64) for c in contexts}}
    assert relative_gain(at, "m", 100, 200) == pytest.approx(0.01, abs=1e-12)
    assert recl(at, threshold=0.01 - 1e-9) == {"m": Recl(200, True)}
    assert recl(below) == {"m": Recl(100, False)}
    assert recl(at, threshold=0.02) == {"m": Recl(100, False)}


def test_single_model_and_single_context():
    assert recl({"m": {100: torch.ones(3)}}) == {"m": Recl(100, True)}


@pytest.mark.parametrize("bad, message", [
    ({}, "empty"),
    ({"a": {100: torch.ones(3), 200: torch.ones(3)}, "b": {100: torch.ones(3)}},
     "same ones"),
    ({"a": {100: torch.ones(3), 200: torch.ones(4)}}, "shape"),
    ({"a": {100: torch.ones(3)}, "b": {100: torch.ones(5)}}, "shape"),
    ({"a": {100: torch.ones(3, 2)}}, "1-D"),
    ({"a": {100: torch.ones(3), 200: torch.ones(3), 400: torch.ones(3)}},
     "evenly spaced"),
    ({"a": {100: torch.tensor([1.0, float("nan")])}}, "NaN"),
])
def test_bad_tables_raise_clear_errors(bad, message):
    with pytest.raises(ValueError, match=message):
        recl(bad)


def test_bad_arguments():
    losses = {"m": table(lambda c: 1.0)}
    with pytest.raises(ValueError, match="r must be"):
        recl(losses, r=0.0)
    with pytest.raises(ValueError, match="unknown model"):
        relative_gain(losses, "x", 100, 200)
    with pytest.raises(ValueError, match="not measured"):
        relative_gain(losses, "m", 100, 150)
    assert check_losses(losses) == CONTEXTS


# --- loss_table on tiny models --------------------------------------------------------

def _models():
    torch.manual_seed(0)
    # reach 2*4+4-1 = 11
    xl = TransformerXL(preset("tiny", seg_len=4, mem_len=4)).double()
    van = VanillaTransformer(preset("tiny", seg_len=16)).double()
    return {"xl": xl, "vanilla": van}


@pytest.mark.parametrize("name", ["xl", "vanilla"])
def test_loss_table_aligns_targets_and_windows_see_exactly_c(name):
    model = _models()[name]
    torch.manual_seed(1)
    tokens = torch.randint(0, 27, (40,))
    contexts = [3, 6, 9]
    lt = loss_table(model, tokens, contexts, n_targets=12, batch_size=5)
    assert sorted(lt) == contexts and all(x.shape == (12,) for x in lt.values())
    assert not any(torch.isnan(x).any() for x in lt.values())
    # entry k predicts tokens[9 + k] for every c: check one target by hand for c = 6
    k, c = 4, 6
    t = max(contexts) + k
    with torch.no_grad():
        if name == "vanilla":
            logits = model(tokens[None, t - c:t]).logits[0, -1]
        else:  # the window read as segments of 4 from the end: 2 then 4 characters
            out = model(tokens[None, t - c:t - 4])
            logits = model(tokens[None, t - 4:t], mems=out.mems).logits[0, -1]
    expected = torch.nn.functional.cross_entropy(logits[None], tokens[t:t + 1]).item()
    assert lt[c][k].item() == pytest.approx(expected, abs=1e-9)
    # a window of c sees exactly c characters: changing the character c + 1 back leaves
    # the loss unchanged, changing the one c back changes it
    for where, changes in [(t - c - 1, False), (t - c, True)]:
        edited = tokens.clone()
        edited[where] = (edited[where] + 1) % 27
        lt2 = loss_table(model, edited, contexts, n_targets=12)
        assert (lt2[c][k].item() != lt[c][k].item()) == changes, (where, changes)


def test_loss_table_stride_max_window_and_errors():
    # causal, one segment: the last target of a window is exact
    model = _models()["vanilla"]
    tokens = torch.randint(0, 27, (60,))
    exact = loss_table(model, tokens, [4, 8], n_targets=11)
    strided = loss_table(model, tokens, [4, 8], n_targets=11, stride=4, batch_size=2)
    # the last target of every window sees exactly c characters in both layouts
    for k in (3, 7, 10):
        assert strided[8][k].item() == pytest.approx(exact[8][k].item(), abs=1e-9)
    # saw 5 chars
    assert strided[8][0].item() != pytest.approx(exact[8][0].item(), abs=1e-9)
    assert all(x.shape == (11,) and not torch.isnan(x).any() for x in strided.values())
    capped = loss_table(model, tokens, [4, 8], n_targets=11, max_window=4)
    assert torch.equal(capped[8], exact[4]) and torch.equal(capped[4], exact[4])
    with pytest.raises(ValueError, match="n_targets"):
        loss_table(model, tokens, [4, 8], n_targets=53)
    with pytest.raises(ValueError, match="contexts"):
        loss_table(model, tokens, [0, 4])
    with pytest.raises(ValueError, match="stride"):
        loss_table(model, tokens, [4], stride=0)
    with pytest.raises(ValueError, match="stride"):
        loss_table(model, tokens, [4, 8], stride=5)
