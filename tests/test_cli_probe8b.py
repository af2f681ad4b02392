"""Issue 31, eighth probe (b): the cost of checking a checkpoint, non-regular text8
paths, broken weights (the findings of fix-31w).

Each test runs `python -m txl_mini` in a subprocess, as a user would.
"""

import re
import resource
import subprocess
import sys

import pytest
from test_cli_faults import ENV
from test_cli_probe7a import run  # noqa: F401 (a fixture: a finished tiny run)

PROG = "python -m txl_mini"


# -- 1. checking a checkpoint's weights imported torch._dynamo ------------------------

@pytest.mark.parametrize("argv", [["evaluate"], ["sample", "--chars", "5"]])
def test_reading_a_checkpoint_does_not_import_dynamo(run, argv):  # noqa: F811
    """The weights were checked against a model built on the meta device with its
    init run, and nn.init on meta tensors imports torch._dynamo: 2 s and ~70 MiB more
    on every evaluate, sample and --resume (sample of a tiny run: 2.6 s -> 4.5 s)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "txl_mini",
                          *argv, str(run), "--threads", "1", "--quiet"], env=ENV,
                         text=True, capture_output=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert not re.search(r"\| +torch\._dynamo$", res.stderr, re.M)


def _vm_after_import() -> int:
    """Bytes of address space a process maps once evaluate and sample are imported
    (torch's libraries: most of what they need)."""
    res = subprocess.run(
        [sys.executable, "-c", "import txl_mini.cli.evaluate, txl_mini.cli.sample, "
         "re; print(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())"
         "[1])"], env=ENV, text=True, capture_output=True, check=True)
    return int(res.stdout) * 1024


@pytest.mark.parametrize("argv", [["evaluate"], ["sample", "--chars", "5"]])
def test_a_tiny_run_is_read_under_a_tight_ulimit_v(run, argv):  # noqa: F811
    """Under `ulimit -v` 680-700 MB, evaluate and sample of a tiny run ended in
    MemoryError tracebacks after the weights check came (torch._dynamo's import);
    before it they ran at about 10 MiB above what importing them maps (measured: 650
    MB against 641 MB; 720 MB needed with the check). 40 MiB above it: margin both
    ways."""
    limit = _vm_after_import() + (40 << 20)
    try:
        resource.setrlimit(resource.RLIMIT_AS, resource.getrlimit(resource.RLIMIT_AS))
    except (ValueError, OSError):
        pytest.skip("RLIMIT_AS cannot be set here")
    res = subprocess.run(
        [sys.executable, "-m", "txl_mini", *argv, str(run), "--threads", "1",
         "--quiet"], env=ENV, text=True, capture_output=True, timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert res.returncode == 0 and res.stderr == "", res.stderr[-2000:]
