"""python_env conda path on localhost, in a temporary prefix, with a fake installer.

No conda installer or channel is reachable here, so a stand-in installer (a shell script) is
served from a temporary artifacts folder: a wrong sha256 must stop the role before anything is
installed; the right one installs, creates the env from environment.yml once and writes the
spec marker, and a re-run changes nothing.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ansible_run import ansible_playbook_json

PLAYBOOK = """
- name: Apply python_env
  hosts: all
  gather_facts: true
  roles:
    - role: cluster_defaults
    - role: python_env
"""

# Stand-in for Miniforge: `-b -u -p PREFIX` puts a fake `conda` there whose `env create --prefix P`
# makes P/bin/python (a link to a real interpreter) and logs the call.
FAKE_INSTALLER = r"""#!/bin/bash
set -eu
while getopts "bup:" opt; do case $opt in p) prefix=$OPTARG;; *) ;; esac; done
touch "$prefix.installer-ran"
mkdir -p "$prefix/bin"
cat > "$prefix/bin/conda" <<'CONDA'
#!/bin/bash
set -eu
[ "$1 $3" = "env --prefix" ] || exit 2
# a spec that names hvc-unreachable fails as conda does when a download fails: before the environment changes
grep -q hvc-unreachable "$6" "${6%-environment.yml}-requirements.txt" && { echo "CondaHTTPError: HTTP 000 CONNECTION FAILED" >&2; exit 1; }
case $2 in
  create) mkdir -p "$4/bin" "$4/conda-meta"; ln -sf "PYTHON" "$4/bin/python";;
  update) [ -d "$4/conda-meta" ] && [ "$7" = --prune ] || exit 2;;
  *) exit 2;;
esac
echo "$@" >> "$(dirname "$0")/../$2.log"
CONDA
sed -i "s|PYTHON|PYTHON_PATH|" "$prefix/bin/conda"
chmod +x "$prefix/bin/conda"
"""


def run_role(tmp_path: Path, sha256: str, pip_packages=("six==1.16.0",)) -> tuple[int, dict]:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir(exist_ok=True)
    installer = artifacts / "Miniforge3-Linux-x86_64.sh"
    installer.write_text(FAKE_INSTALLER.replace("PYTHON_PATH", sys.executable), encoding="utf-8")
    (tmp_path / "play.yml").write_text(PLAYBOOK, encoding="utf-8")
    variables = {
        "python_env_manager": "conda",
        "python_env_artifacts_dir": str(artifacts),
        "python_env_conda_prefix": str(tmp_path / "conda"),
        "python_env_conda_sha256": {"Linux-x86_64": sha256},
        "python_env_pip_packages": list(pip_packages),
        "python_env_torch_version": "",  # no torch (the role's default pins 2.13.0)
    }
    (tmp_path / "vars.json").write_text(json.dumps(variables), encoding="utf-8")
    run = ansible_playbook_json(["-i", "localhost,", "-c", "local",
                                 "-e", f"ansible_python_interpreter={sys.executable}",
                                 "-e", f"@{tmp_path / 'vars.json'}", tmp_path / "play.yml"])
    return run.rc, run.data


def failure_messages(report: dict) -> str:
    return " ".join(result.get("msg", "") for task in report["plays"][0]["tasks"]
                    for result in task["hosts"].values() if result.get("failed"))


def fake_sha(tmp_path: Path) -> str:
    text = FAKE_INSTALLER.replace("PYTHON_PATH", sys.executable)
    return hashlib.sha256(text.encode()).hexdigest()


def test_checksum_mismatch_refused_before_anything_is_installed(tmp_path):
    before = set(Path("/tmp").glob("*.hvc-conda"))
    code, report = run_role(tmp_path, "0" * 64)
    assert code != 0
    message = failure_messages(report)
    assert "checksum mismatch" in message and "python_env_conda_sha256" in message
    prefix = tmp_path / "conda"
    assert not Path(f"{prefix}.installer-ran").exists()  # the installer never ran
    assert not (prefix / "bin" / "conda").exists()
    assert not (prefix / ".hvc-installed").exists()
    assert set(Path("/tmp").glob("*.hvc-conda")) == before  # the downloaded file was removed


def test_verified_installer_creates_env_once(tmp_path):
    code, report = run_role(tmp_path, fake_sha(tmp_path))
    assert code == 0, failure_messages(report)
    prefix = tmp_path / "conda"
    env_path = prefix / "envs" / "horovod"
    assert (prefix / ".hvc-installed").read_text().startswith("Miniforge3-Linux-x86_64.sh ")
    assert (env_path / "bin" / "python").exists()
    marker = (env_path / ".hvc-spec-sha256").read_text().strip()
    assert len(marker) == 64
    spec = (prefix / "envs" / ".hvc" / "horovod-environment.yml").read_text()
    assert "channels:\n  - conda-forge\ndependencies:" in spec and "mpi4py" in spec  # conda-forge alone
    assert "six==1.16.0" in (prefix / "envs" / ".hvc" / "horovod-requirements.txt").read_text()
    assert len((prefix / "create.log").read_text().splitlines()) == 1

    code, report = run_role(tmp_path, fake_sha(tmp_path))
    assert code == 0
    assert report["stats"]["localhost"]["changed"] == 0
    assert len((prefix / "create.log").read_text().splitlines()) == 1  # not re-created


def test_a_changed_spec_updates_the_environment_in_place_and_a_failed_update_leaves_it(tmp_path):
    """Issue 45 item 13: a changed spec removed the environment before creating the new one, so a network failure
    left no environment. conda updates it in place (`env update --prune`: it solves and downloads first); when that
    fails the environment is still there, with its old spec marker, and the next run tries again."""
    assert run_role(tmp_path, fake_sha(tmp_path))[0] == 0
    prefix = tmp_path / "conda"
    env_path = prefix / "envs" / "horovod"
    first = (env_path / ".hvc-spec-sha256").read_text()
    code, report = run_role(tmp_path, fake_sha(tmp_path), ["six==1.17.0"])
    assert code == 0, failure_messages(report)
    assert [line.split()[:2] for line in (prefix / "update.log").read_text().splitlines()] == [["env", "update"]]
    assert len((prefix / "create.log").read_text().splitlines()) == 1
    second = (env_path / ".hvc-spec-sha256").read_text()
    assert second != first and (env_path / "bin" / "python").exists()
    code, report = run_role(tmp_path, fake_sha(tmp_path), ["six==1.17.0", "hvc-unreachable==1.0"])
    assert code != 0 and "CONNECTION FAILED" in json.dumps(report)
    assert (env_path / "bin" / "python").exists() and (env_path / ".hvc-spec-sha256").read_text() == second
