"""A fifteenth probe: torch settings it refuses as it loads were named only where
torch's message quoted their value (8a71431). PYTORCH_JIT=bogus (torch names the
variable) and TORCH_LOGS_OUT=/no/such/x (an OSError) still said 'importing torch
failed ... is it installed?', exit 1; and every TORCH_* variable set to '1' was
blamed with TORCH_LOGS=1 (subprocesses; each failed before)."""

import os
import subprocess
import sys

import pytest

LINE = "python -m txl_mini data stats: error: torch refused {} in the environment ("


@pytest.mark.parametrize("env,named", [
    ({"PYTORCH_JIT": "bogus"}, "PYTORCH_JIT='bogus'"),
    ({"TORCH_LOGS_OUT": "/no/such/x"}, "TORCH_LOGS_OUT='/no/such/x'"),
    ({"TORCH_LOGS": "1", "TORCH_SHOW_CPP_STACKTRACES": "1"}, "TORCH_LOGS='1'"),
])
def test_a_torch_setting_refused_at_load_is_named(tmp_path, env, named):
    (tmp_path / "x.txt").write_text("ab\n")
    full = {**os.environ, "PYTHONPATH": os.getcwd(), **env}
    res = subprocess.run([sys.executable, "-m", "txl_mini", "data", "stats", "x.txt"],
                         cwd=tmp_path, env=full, text=True, capture_output=True,
                         timeout=300)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(LINE.format(named)), res.stderr
    assert res.stderr.endswith("); fix or unset it\n"), res.stderr
