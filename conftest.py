"""Repository-wide pytest set-up: the nbval kernels inherit this environment."""
import os

# Same hash seed as scripts/execute_notebooks.sh, so set/dict order in notebooks matches.
os.environ.setdefault("PYTHONHASHSEED", "0")
