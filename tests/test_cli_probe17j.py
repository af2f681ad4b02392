"""Issue 31, the seventeenth probe: a run folder moved away while train ran was made
again by the next checkpoint (save_checkpoint makes its folder), and the run ended
there, exit 0, in a folder with no config.json that no resume or evaluate can read."""

import os

from test_cli_faults import py, start, tiny, wait_for  # noqa: F401

PROG = "python -m txl_mini train"
WENT = ("the run folder r went away while it trained (moved or removed?); its "
        "checkpoints, if any, went with it\n")


def _moved(tmp_path, res_code: int, stderr: str) -> None:
    # exit 1, as for the metrics line dd016ae names: nothing the command line can fix
    # (not 2), no signal (not 130/143); the run's files are in r2, whole
    assert res_code == 1, stderr
    assert stderr.endswith(f"{PROG}: error: r/last.pt: No such file or directory; "
                           + WENT) or stderr.endswith(
        f"{PROG}: error: r/metrics.jsonl: No such file or directory; " + WENT), stderr
    assert stderr.count("\n") == 1, stderr
    assert not os.path.exists(tmp_path / "r"), os.listdir(tmp_path / "r")
    assert {"config.json", "last.pt"} <= set(os.listdir(tmp_path / "r2"))


def test_a_run_folder_moved_before_a_checkpoint_is_not_made_again(tmp_path, text):
    """The checkpoint after the move came first (no metrics line between): it made
    r again and the run finished there."""
    move = ("import os, sys; from txl_mini.cli.train import main; "
            "sys.exit(main(sys.argv[1:], on_step=lambda s: s == 2 and "
            "os.rename('r', 'r2')))")
    res = py("-c", move, *tiny(text, "r", steps=6), "--save-every", "1",
             "--log-every", "100", cwd=tmp_path)
    _moved(tmp_path, res.returncode, res.stderr)
    assert "r/last.pt: No such file" in res.stderr


def test_mv_of_a_running_run_folder(tmp_path, text):
    """As a user does it: `mv r r2` in another shell once r/last.pt is there."""
    p = start(["train", *tiny(text, "r", steps=400), "--save-every", "1",
               "--log-every", "1000"],
              cwd=tmp_path)
    try:
        wait_for(lambda: os.path.exists(tmp_path / "r" / "last.pt")
                 or p.poll() is not None)
        os.rename(tmp_path / "r", tmp_path / "r2")
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    _moved(tmp_path, p.returncode, err)
