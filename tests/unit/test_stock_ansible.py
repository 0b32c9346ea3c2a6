"""With the defaults the project runs stock Ansible: ansible.cfg enables only the callback site.yml's smoke test
reads, the collection has no strategy plugin and no play names a strategy (ansible's default, or the user's
ANSIBLE_STRATEGY), and importing the package patches nothing."""
from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_ansible_cfg_enables_only_the_changes_callback():
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(REPO / "ansible.cfg")
    defaults = cfg["defaults"]
    assert "strategy" not in defaults and "strategy_plugins" not in defaults
    enabled = [name.strip() for name in defaults.get("callbacks_enabled", "").split(",") if name.strip()]
    assert enabled == ["hvc.horovod_cluster.hvc_changes"]  # HVC_CHANGED_HOSTS: the smoke test after a change


def test_no_strategy_of_our_own():
    """A strategy plugin is ansible-core's internals (third-party ones are deprecated since 2.19)."""
    assert not (REPO / "plugins" / "strategy").exists()
    for book in [REPO / "site.yml", *sorted((REPO / "playbooks").glob("*.yml"))]:
        for play in yaml.safe_load(book.read_text()) or []:
            assert "strategy" not in play, (book.name, play["strategy"])


PROBE = r"""
import importlib, pkgutil, sys
import ansible_runner, ansible_runner.runner, pexpect, ptyprocess
watched = [ansible_runner, ansible_runner.runner, pexpect, ptyprocess, pexpect.spawn, ptyprocess.PtyProcess]
before = [dict(vars(m)) for m in watched]
import horovod_cluster
for info in pkgutil.walk_packages(horovod_cluster.__path__, "horovod_cluster."):
    importlib.import_module(info.name)
changed = [f"{getattr(m, '__name__', m)}.{k}" for m, old in zip(watched, before)
           for k, v in vars(m).items() if old.get(k, v) is not v or k not in old]
print(changed)
sys.exit(1 if changed else 0)
"""


def test_importing_the_package_patches_no_other_package():
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_collection_requires_the_ansible_core_the_package_is_tested_with():
    """galaxy's requires_ansible and pyproject.toml's ansible-core pin say one range: a collection user on an
    untested ansible-core is told so by ansible-galaxy, as a pip user is by pip."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = next(pin.specifier for pin in map(Requirement, project["dependencies"]) if pin.name == "ansible-core")
    required = SpecifierSet(yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"])
    for version in ("2.16.0", "2.18.9", "2.19.0", "2.21.5", "2.22.0"):
        assert required.contains(version) == core.contains(version), (version, str(required), str(core))
