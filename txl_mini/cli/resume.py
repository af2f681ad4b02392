"""`train --resume DIR`: the run's own settings back, and last.pt checked against them.

A resumed run takes every option from DIR/config.json except the few it may change
(MAY_CHANGE). Its last.pt must hold the model config.json describes; a finished run
says so and writes nothing; a run that stopped before its first last.pt starts again
from step 0 with its own options."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from ..checkpoint import MODEL_CLASSES
from .checkpoints import check_meta, check_state, read_input
from .curves import draw_missing
from .ddp import check_world
from .errors import typed
from .folders import check_writable
from .lock import LOCK_NAME, refuse_unborn
from .options import UsageError, flag
from .paths import refuse_loop, refuse_recorded, refuse_special
from .resume_out import finish_out, recorded, refuse_foreign_out
from .rundir import OWN, refuse_folder_out, refuse_long
from .saved import refuse_lost, start_again
from .stop import stopped
from .typos import option_named

# the only options a resumed run may change; --path only to the same text (its sha1
# is checked), e.g. after the file moved
MAY_CHANGE = ("device", "quiet", "threads", "resume", "pause_at", "path")


class Finished(Exception):
    """The run in DIR already trained all its steps: nothing to do, or its --out
    written again; `code` 2 where --out is not written (its folder is gone)."""

    def __init__(self, line: str, code: int = 0):
        super().__init__(line)
        self.code = code


def restore_options(args, argv, parser: argparse.ArgumentParser, check) -> dict:
    """Set every option from DIR/config.json but those given (of MAY_CHANGE); returns
    config.json. `check(args)` checks the values, as on the command line (where it
    raises, config.json was edited). A loop was 'no config.json there'."""
    refuse_loop(args.resume, "a run directory", f"--resume {args.resume}")
    refuse_long(args.resume, "--resume", OWN)  # not 'no config.json there'
    refuse_special(args.resume, OWN)  # before config.json is read
    if not os.path.isfile(os.path.join(args.resume, "config.json")):
        run_dir = os.path.dirname(args.resume) or "."  # last.pt given, as to evaluate
        if os.path.isfile(args.resume) and os.path.isfile(
                os.path.join(run_dir, "config.json")):
            raise UsageError(f"--resume {args.resume}: a file of a run directory; give "
                             f"its run directory: --resume {typed(run_dir)}")
        if os.path.isdir(args.resume) and set(os.listdir(args.resume)) == {LOCK_NAME}:
            refuse_unborn(args.resume)  # live (building its corpus), or killed
        raise UsageError(f"--resume {args.resume}: no config.json there; is it a run "
                         "directory written by python -m txl_mini train?")
    defaults = {a.dest: a.default for a in parser._actions}
    for action in parser._actions:  # parsed again, only the options given remain
        action.default = argparse.SUPPRESS
    values = vars(parser.parse_args(argv))
    given = set(values)
    refused = given - set(MAY_CHANGE)
    if refused:  # every spelling typed: --tie-weights --no-tie-weights named both
        names = ", ".join(spelled(parser, argv, refused))
        raise UsageError("--resume continues the run with its own settings; "
                         f"drop {names}")
    try:
        with open(os.path.join(args.resume, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        saved = config["args"]
        if not isinstance(saved, dict):
            raise TypeError("its 'args' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(
            f"--resume {args.resume}: cannot read config.json ({e})") from None
    was = saved.get("threads")
    if "threads" in given and was is not None and args.threads != was:
        print(f"python -m txl_mini train: note: the run trained with --threads {was}; "
              f"with {args.threads} it continues, but not bitwise as it would have "
              "(floating-point sums split differently)", file=sys.stderr)
    where = f"--resume {args.resume}: config.json"
    check_types(parser, saved, where, defaults)
    check_corpus(config, where)
    check_model(config, where)
    try:
        check(argparse.Namespace(**{**defaults, **saved}))
    except UsageError as e:  # '--lr must be ...' -> 'lr must be ...', as in the file
        msg = re.sub(r"--([a-z-]+)", lambda m: m[1].replace("-", "_"), str(e))
        raise UsageError(f"{where}: {msg}") from None
    for k, v in saved.items():
        if k not in given and k not in ("resume", "run_dir", "pause_at"):
            setattr(args, k, v)
    if args.out:  # in DIR, recorded by its name there (rundir.recorded_out)
        args.out = os.path.join(args.resume, args.out)
        refuse_folder_out(args.out, args.resume)
    if "path" not in given and args.path:  # gone, a FIFO now...
        refuse_recorded(args.path, f"the text {args.resume} trained on",
                        f"with --resume {typed(args.resume)} --path FILE")
    return config


def spelled(parser: argparse.ArgumentParser, argv, dests) -> list[str]:
    """The options of `dests` as the command line `argv` spells them, each once, by
    option (as typed within one: --tie-weights, --no-tie-weights); an abbreviation
    (--no-tie) by its full name."""
    names = {s: a.dest for a in parser._actions if a.dest in dests
             for s in a.option_strings}
    out = []
    for arg in argv:
        if arg == "--":  # the rest are values
            break
        key = arg.split("=", 1)[0] if arg.startswith("--") else arg
        name = option_named(key, parser)
        out += [name] if name in names and name not in out else []
    return sorted(out, key=names.get) or [flag(d) for d in sorted(dests)]


def check_types(parser: argparse.ArgumentParser, saved: dict, where: str,
                defaults: dict) -> None:
    """A hand-edited config.json: each option's value of the type (and among the
    choices) its option takes, or one line naming it. null, or no key, only where
    the option's default is None: else the run would go on with today's default (a
    run with no steps trained 500)."""
    for action in parser._actions:
        v, opt = saved.get(action.dest), action.option_strings[0]
        if action.dest == "help" or (v is None and defaults[action.dest] is None):
            continue
        if action.dest not in saved:
            raise UsageError(f"{where} has no {action.dest} (the run's {opt})")
        want = action.type or (bool if action.nargs == 0 else str)
        ok = isinstance(v, want) and not (want is int and isinstance(v, bool))
        ok = ok or (want is float and type(v) is int)
        if not ok or (action.choices and v not in action.choices):
            raise UsageError(f"{where} has {action.dest} = {json.dumps(v)}, not a "
                             f"valid {opt} value")


def check_corpus(config: dict, where: str) -> None:
    """The corpus record, whose sha1 a resumed run compares with the text it reads."""
    corpus = config.get("corpus")
    if "corpus" not in config:
        raise UsageError(f"{where} has no corpus (the record of the text the run "
                         "trained on)")
    if not isinstance(corpus, dict):
        raise UsageError(f"{where} has corpus = {json.dumps(corpus)}, not the record "
                         "of the text the run trained on")
    if "sha1" not in corpus:
        raise UsageError(f"{where} has no corpus.sha1 (the text's fingerprint)")
    if not isinstance(corpus["sha1"], str):
        raise UsageError(f"{where} has corpus.sha1 = {json.dumps(corpus['sha1'])}, "
                         "not the text's fingerprint")


def check_model(config: dict, where: str) -> None:
    """The model record, which last.pt must match: without it, a missing key read as
    None would blame last.pt for another run's."""
    classes = " or ".join(MODEL_CLASSES)
    if "model_class" not in config:
        raise UsageError(f"{where} has no model_class ({classes})")
    if config["model_class"] not in MODEL_CLASSES:
        raise UsageError(f"{where} has model_class = "
                         f"{json.dumps(config['model_class'])}, not {classes}")
    what = "the model config the run trains"
    if "model" not in config:
        raise UsageError(f"{where} has no model ({what})")
    if not isinstance(config["model"], dict):
        raise UsageError(f"{where} has model = {json.dumps(config['model'])}, not "
                         f"{what}")


def read_last(run_dir: str, config: dict, steps: int, device, writes=True) -> dict:
    """DIR/last.pt, checked against config.json; Finished if no step is left (and its
    --out, if `writes`, as the run left it); None if the run stopped before its first
    checkpoint (it starts again from step 0). With steps left, a file at --out is
    refused (resume_out.refuse_foreign_out), and so is a folder we cannot write
    (a finished run there is finished all the same: nothing to write)."""
    path = os.path.join(run_dir, "last.pt")
    if not os.path.exists(path):  # never written, or deleted by hand
        check_writable(run_dir, "--resume")  # read-only: prepare_run_dir left it
        refuse_lost(run_dir, config)
        refuse_foreign_out(config, run_dir)  # it starts again from step 0
        return None
    try:  # damaged, a sparse weight: bad input, exit 2
        ckpt = read_input(path, device)
    except UsageError as e:  # as for a lost one, the way out (it named none)
        raise UsageError(f"{e}; put back a good copy, or "
                         f"{start_again(run_dir)}") from None
    check_meta(ckpt["meta"], path)
    if not isinstance(ckpt.get("extra"), dict) or "step" not in ckpt["extra"]:
        raise UsageError(f"{path} has no training state (weights only); it cannot "
                         "be resumed")
    described = os.path.join(run_dir, "config.json")  # checked by check_model
    why = "one of the two is from another run or was edited"
    if ckpt["model_class"] != config["model_class"]:
        raise UsageError(f"{path} holds a {ckpt['model_class']}, but {described} "
                         f"describes a {config['model_class']}; {why}")
    have, want = ckpt["config"], config["model"]
    have = have if isinstance(have, dict) else {}  # build_model names what it is
    differ = [k for k in sorted(set(have) | set(want)) if have.get(k) != want.get(k)]
    if differ:
        names = "; ".join(f"{k} {json.dumps(have.get(k))} in last.pt, "
                          f"{json.dumps(want.get(k))} in config.json"
                          for k in differ[:2])
        raise UsageError(f"{path} holds a model other than the one {described} "
                         f"describes ({names}); {why}")
    _check_args(config["args"], ckpt, path, described, why)
    extra = check_state(ckpt, path, config["args"]["batch_size"])
    if extra["step"] >= steps and not extra.get("val_pending"):
        done = f"{run_dir} is finished: step {extra['step']} of {steps}"
        out = recorded(config, run_dir)
        if out and writes:  # rank 0 only: each rank wrote it (torchrun)
            try:
                did, code = finish_out(out, run_dir, ckpt, device)
            except KeyboardInterrupt as e:  # not 'before training started': it trained
                words, code, _ = stopped(e)
                raise Finished(f"{done}; {words} while writing --out {out}, not "
                               f"written; --resume {typed(run_dir)} writes it", code
                               ) from None
        else:
            did, code = "nothing to do (its last.pt and best.pt are unchanged)", 0
        # the plot after --out, as the run's end draws it: one it never reached
        drew = draw_missing(run_dir, extra["step"], did) if writes else did
        raise Finished(f"{done}; {drew}", code)
    check_writable(run_dir, "--resume")  # a read-only one: only if it is finished
    check_world(run_dir, len(extra["ranks"]))  # each process carries its streams' state
    refuse_foreign_out(config, run_dir)  # every rank: only a look, rank 0 says it
    return ckpt


def _check_args(saved: dict, ckpt: dict, path: str, described: str, why: str) -> None:
    """config.json's options against the run last.pt holds: an edited batch_size
    broke the resume with a tensor-size error; an edited n_layer, vanilla or
    seg_len was ignored (the model is last.pt's)."""
    trained = dict(ckpt["meta"].get("train_config") or {})  # steps, lr, batch_size..
    trained["vanilla"] = ckpt["model_class"] == "VanillaTransformer"
    # a model option given to the run is in the model; one left out (None) follows
    # the preset, which config.json's model records
    trained.update(ckpt["config"] if isinstance(ckpt["config"], dict) else {})
    for k in sorted(set(saved) & set(trained)):
        if saved[k] is not None and saved[k] != trained[k]:
            raise UsageError(f"{described} has {k} {json.dumps(saved[k])}, but "
                             f"{path} was trained with {json.dumps(trained[k])}; "
                             f"{why}")
