"""Probe 24b's run-directory findings (issue 31): a finished run's --resume and a
user's file at --out, a NaN after the first checkpoint, a Ctrl-C inside
--overwrite's clear, a metrics.jsonl saved with a BOM, a config.json without
"saved", curves on a full disk, bench --json's refusal, and the exit statuses.
Subprocesses; each test failed before its fix."""

from test_cli_faults import one_line, tiny, txl

ERR = "python -m txl_mini train: error: "


def test_resuming_a_finished_run_leaves_a_users_file_at_out(tmp_path, text):
    """`echo mine > b2.pt` after a finished run with --out b2.pt: --resume said 'wrote
    b2.pt again from its last.pt (it was not a txl_mini checkpoint ...)' and the
    text was gone. --out is written atomically, so a non-checkpoint there is never
    the run's own: it is refused and kept, and written once moved away."""
    r, out = tmp_path / "b2", tmp_path / "b2.pt"
    assert txl("train", *tiny(text, r), "--out", out).returncode == 0
    for mine in (b"mine\n", b""):  # a text, an empty file
        out.write_bytes(mine)
        res = txl("train", "--resume", r)
        line = one_line(res, 2)
        assert line.startswith(ERR + f"--out {out} is not a checkpoint the run wrote (")
        assert line.endswith(f"); it is left as it is; move it away, and --resume {r} "
                             "writes the model there")
        assert out.read_bytes() == mine
    out.unlink()  # moved away: written, as the run's end would
    res = txl("train", "--resume", r)
    assert one_line(res, 0).endswith(f"; wrote {out} from its last.pt")
    assert out.read_bytes()[:2] == b"PK"
