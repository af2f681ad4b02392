"""A thirteenth probe of issue 31: --overwrite on a run whose recorded --out has
become a folder (a copied run, then `mkdir r2/model.pt`) took that folder for the
run's own file and tried to remove it: 'r2/model.pt: Is a directory; ... kept',
exit 1. A folder there is not the run's: refused before anything is removed, exit 2,
and what the user put in it is kept."""

import shutil

from test_cli_faults import one_line, tiny, txl


def test_overwrite_over_a_recorded_out_that_is_now_a_folder(text, tmp_path):
    r1, r2 = tmp_path / "r1", tmp_path / "r2"
    res = txl("train", *tiny(text, r1, steps=2), "--out", r1 / "model.pt")
    assert res.returncode == 0, res.stderr
    shutil.copytree(r1, r2)
    (r2 / "model.pt").unlink()
    (r2 / "model.pt").mkdir()
    (r2 / "model.pt" / "precious").write_text("keep")
    before = sorted(p.name for p in r2.iterdir())
    line = one_line(txl("train", *tiny(text, r2, steps=2), "--overwrite"), 2)
    assert "model.pt" in line and "Is a directory" not in line, line
    assert sorted(p.name for p in r2.iterdir()) == before
    assert (r2 / "model.pt" / "precious").read_text() == "keep"
