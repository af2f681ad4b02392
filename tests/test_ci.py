"""The GitHub test workflow runs the README's test command, and the README shows its
badge."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"


def test_workflow_runs_the_readme_test_command_on_push_and_pull_request():
    wf = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads the bare key `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    (job,) = wf["jobs"].values()
    steps = job["steps"]
    python = [s["with"]["python-version"] for s in steps
              if "setup-python" in s.get("uses", "")]
    assert python == ["3.11"]
    assert job["env"]["PIP_EXTRA_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    # .ci/run reads the command from README.md itself, so the workflow cannot
    # drift from it
    assert [s["run"] for s in steps if "run" in s][-1] == ".ci/run test"


def test_ci_test_command_checks_another_cpu_capability():
    test_cmd = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--print-commands"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()[0]
    job = test_cmd.rsplit(" && ", 1)[1]  # the last step: the tests
    # two test processes (pytest-xdist), each file and notebook whole in one
    assert job.split() == ["ATEN_CPU_CAPABILITY=default", "pytest", "-n", "2",
                           "--dist", "loadscope"]


def test_ci_splits_the_shared_set_up_from_each_job(tmp_path):
    """.ci/run runs the set-up both commands start with once, then each job's own steps
    (the test job has two: ruff, then pytest)."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    fake = tmp_path / "repo"
    (fake / ".ci").mkdir(parents=True)
    (fake / ".ci" / "run").write_text(run, encoding="utf-8")
    (fake / "README.md").write_text(
        "<!-- ci:build -->\n```bash\n"
        "echo A > a && echo B > b && echo build > built\n```\n"
        "<!-- ci:test -->\n```bash\n"
        "echo A > a && echo B > b && echo lint > linted && echo test > tested\n```\n",
        encoding="utf-8")
    res = subprocess.run(["bash", str(fake / ".ci" / "run")], capture_output=True,
                         text=True, timeout=60, env={"PATH": "/usr/bin:/bin",
                                                     "CI_KEEP": "1"})
    assert res.returncode == 0, res.stderr
    phases = re.findall(r"^=== ci: (\w+): (.*)$", res.stdout, re.M)
    assert phases == [("setup", "echo A > a && echo B > b"),
                      ("test", "echo lint > linted && echo test > tested"),
                      ("build", "echo build > built")]


def test_ci_rejects_an_unknown_job():
    res = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "deploy"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.startswith("usage: .ci/run")


def test_readme_shows_the_workflow_badge():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]["url"]
    badge = re.search(r"\[!\[tests\]\((\S+)\)\]\((\S+)\)", readme)
    assert badge, "README needs the test workflow's status badge"
    assert badge.group(1).startswith(f"{repo}/actions/workflows/test.yml/badge.svg")
    assert badge.group(2) == f"{repo}/actions/workflows/test.yml"
