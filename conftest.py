"""Repository-wide pytest set-up: the nbval kernels inherit this environment."""
import os

# Same hash seed as scripts/execute_notebooks.sh, so set/dict order in notebooks
# matches.
os.environ.setdefault("PYTHONHASHSEED", "0")


def pytest_report_header(config):
    # The README's test command sets ATEN_CPU_CAPABILITY=default ("another CPU" for
    # nbval); say in every log which kernels this run used.
    cap = os.environ.get("ATEN_CPU_CAPABILITY", "unset (this CPU's best kernels)")
    return f"ATEN_CPU_CAPABILITY: {cap}"
