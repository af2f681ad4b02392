#!/usr/bin/env bash
# Re-execute the book's notebooks in place, so the committed outputs are the ones the website
# shows and nbval checks. This is THE documented way to produce notebook outputs.
#
# Usage (with the project's environment active, e.g. `. .venv/bin/activate`):
#   scripts/execute_notebooks.sh                              # every book/*.ipynb, in order
#   scripts/execute_notebooks.sh book/03_recurrence.ipynb ... # only these
#
# The kernel always runs the interpreter that runs this script (`python` on PATH, or $PYTHON),
# exactly like `pytest --nbval-current-env`; a kernelspec called "python3" somewhere in the
# user's Jupyter directories can never substitute another Python. Cells run with the notebook's
# folder as working directory, a 600 s per-cell timeout, and stop at the first error.
#
# The re-recording workflow (after changing a notebook or txl_mini):
#   1. Re-execute:  scripts/execute_notebooks.sh book/NN_name.ipynb
#      (with 1 torch thread, as every notebook sets; budget <= 4 min CPU per notebook:
#       `/usr/bin/time -v scripts/execute_notebooks.sh book/NN_name.ipynb`, user + sys).
#   2. Strict nbval on this CPU:   pytest -q -p no:cacheprovider book/NN_name.ipynb
#   3. Strict nbval on "another CPU", as CI does (the README's test command):
#         ATEN_CPU_CAPABILITY=default pytest -q -p no:cacheprovider book/NN_name.ipynb
#      PyTorch's generic kernels round differently from AVX2/AVX-512, like another machine.
#      A cell that fails only here depends on floating-point rounding (training, timing): give
#      it the cell tag `nbval-ignore-output` (metadata.tags, not a comment) and make it ASSERT
#      its claim with a tolerance that protects the number quoted in the prose. Everything
#      exact everywhere (shapes, counts, configs, exact equalities) stays compared exactly.
#      Optionally also try ATEN_CPU_CAPABILITY=avx2 and 2 torch threads.
#   4. Check the exact share:  python scripts/nbval_counts.py book/NN_name.ipynb
#   5. Commit the notebook with its outputs.
# Record with your CPU's own kernels (ATEN_CPU_CAPABILITY unset); the run prints the setting.
# nbclient (which jupyter-book already installs) does the work; nbconvert is not needed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${PYTHON:-python}

# The same hash seed as the tests, so str-keyed set iteration cannot change an output.
export PYTHONHASHSEED=0
# The kernel talks to this process over 127.0.0.1; bring loopback up where that is needed.
ip link set lo up 2>/dev/null || true

if [[ $# -gt 0 ]]; then
    notebooks=("$@")
else
    shopt -s nullglob
    notebooks=("$repo"/book/*.ipynb)
fi
if [[ ${#notebooks[@]} -eq 0 ]]; then
    echo "execute_notebooks: no notebooks found" >&2
    exit 1
fi

"$py" - "${notebooks[@]}" <<'EOF'
import sys
import time
from pathlib import Path

import ipykernel.kernelspec
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient


class CurrentEnvSpecs(KernelSpecManager):
    """Every kernel name resolves to ipykernel in this very interpreter."""

    def get_kernel_spec(self, kernel_name):
        return self.kernel_spec_class(
            resource_dir=ipykernel.kernelspec.RESOURCES, **ipykernel.kernelspec.get_kernel_dict()
        )


class CurrentEnvKernelManager(AsyncKernelManager):
    def __init__(self, **kwargs):
        kwargs.setdefault("kernel_spec_manager", CurrentEnvSpecs())
        super().__init__(**kwargs)


import os

cap = os.environ.get("ATEN_CPU_CAPABILITY", "unset (this CPU's best kernels)")
print(f"execute_notebooks: kernel = {sys.executable}; ATEN_CPU_CAPABILITY = {cap}", flush=True)
t_all = time.perf_counter()
for name in sys.argv[1:]:
    path = Path(name).resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        kernel_manager_class=CurrentEnvKernelManager,
        record_timing=False,  # no per-cell timestamps: an unchanged notebook stays unchanged
        resources={"metadata": {"path": str(path.parent)}},
    )
    t0 = time.perf_counter()
    try:
        client.execute()
    finally:
        elapsed = time.perf_counter() - t0
    nbformat.write(nb, path)
    print(f"{elapsed:7.1f} s  {name}", flush=True)
print(f"{time.perf_counter() - t_all:7.1f} s  total", flush=True)
EOF
