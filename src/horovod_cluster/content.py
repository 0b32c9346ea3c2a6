"""Where the Ansible content (site.yml, playbooks, roles, plugins, ansible.cfg) lives.

Inside a checkout the checkout's own content is used, so edits take effect at once;
an installed wheel carries a copy under horovod_cluster/content.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from types import ModuleType

_PACKAGE_DIR = Path(__file__).resolve().parent


def content_dir() -> Path:
    """The folder holding site.yml; HOROVOD_CLUSTER_CONTENT overrides."""
    override = os.environ.get("HOROVOD_CLUSTER_CONTENT")
    if override:
        return Path(override).resolve()
    checkout = _PACKAGE_DIR.parent.parent  # src/horovod_cluster -> repository root
    if (checkout / "site.yml").is_file() and (checkout / "roles").is_dir():
        return checkout
    return _PACKAGE_DIR / "content"


def is_checkout(path: Path | None = None) -> bool:
    path = path or content_dir()
    return (path / "pyproject.toml").is_file()


def cache_dir() -> Path:
    """Images, the sandbox's keys, fact cache, built wheels: kept outside any checkout."""
    path = Path(os.environ.get("HOROVOD_CLUSTER_CACHE", Path.home() / ".cache" / "horovod-cluster"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.cache
def filter_plugin(name: str, path: Path | None = None) -> ModuleType:
    """One of the collection's filter plugins (plugins/filter/<name>.py) as a module: where a rule the roles
    apply is also the package's, it is written once there and loaded here."""
    source = (path or content_dir()) / "plugins" / "filter" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"horovod_cluster._{name}", source)
    assert spec and spec.loader, source
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def settings_engine(path: Path | None = None) -> ModuleType:
    """The collection's settings engine (plugins/filter/hvc_settings.py), the one place its rules are written:
    preflight runs it on the hosts' variables, the package on its own arguments (e.g. `serial`)."""
    return filter_plugin("hvc_settings", path)
