"""train's model options: one per ModelConfig field, generated from the dataclass."""

import json
from dataclasses import dataclass, fields

import pytest

from txl_mini.cli.options import field_comments
from txl_mini.cli.train import build_parser
from txl_mini.cli.train import main as train_main
from txl_mini.config import PRESETS, ModelConfig


def test_every_config_field_is_an_option_helped_by_its_comment():
    options = {a.dest: a for a in build_parser()._actions}
    comments = field_comments(ModelConfig)
    for f in fields(ModelConfig):
        assert f.name in options, f"ModelConfig.{f.name} has no train option"
        assert comments[f.name] and options[f.name].help == comments[f.name]
        assert options[f.name].default is None  # None: the preset's value


def test_options_are_generated_not_listed():
    """A field added to a dataclass gets its comment as help with no other change."""
    @dataclass(frozen=True)
    class Toy:
        # the why, on the line above
        width: int = 4  # and the rest
        name: str = "x#y"

    assert field_comments(Toy) == {"width": "the why, on the line above and the rest",
                                   "name": ""}


def test_options_override_the_preset(tmp_path, text):
    run_dir = tmp_path / "r"
    argv = ["--preset", "tiny", "--corpus", "offline", "--path", text, "--steps", "2",
            "--warmup", "1", "--eval-chars", "60", "--threads", "1", "--quiet",
            "--run-dir", str(run_dir), "--n-layer", "1", "--pos-enc", "shaw",
            "--shaw-clip", "5", "--same-length", "--pre-lnorm", "--no-tie-weights",
            "--dropatt", "0.1", "--init-std", "0.01", "--d-inner", "24"]
    assert train_main(argv) == 0
    model = json.loads((run_dir / "config.json").read_text())["model"]
    # not --untie-r: Shaw's encoding has no u and v (train refuses it; test_cli_checks)
    changed = dict(n_layer=1, pos_enc="shaw", shaw_clip=5, same_length=True,
                   pre_lnorm=True, tie_weights=False, dropatt=0.1, init_std=0.01,
                   d_inner=24)
    want = PRESETS["tiny"].replace(**changed)
    assert model == {f.name: getattr(want, f.name) for f in fields(ModelConfig)}


@pytest.mark.parametrize("args, line", [
    (["--dropout", "1.5"], "error: --dropout must be in [0, 1), got 1.5"),
    (["--d-model", "15"], "error: --d-model must be even"),
    (["--clamp-len", "4", "--pos-enc", "shaw"], "error: --clamp-len does nothing"),
    (["--vocab-size", "5"], "error: --vocab-size must be 27"),
    (["--vanilla", "--pos-enc", "shaw"], "error: --pos-enc: the vanilla baseline"),
    (["--init-std", "-1"], "error: --init-std must be a finite number > 0, got -1"),
])
def test_a_bad_model_value_names_its_option(tmp_path, capsys, args, line):
    assert train_main(["--run-dir", str(tmp_path / "r"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err and "ModelConfig" not in err
    assert not (tmp_path / "r").exists()
