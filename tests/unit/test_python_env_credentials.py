"""An index URL with credentials (issue 45, item 9): the plan shows it without its password, the pip argv of the
wheelhouse fill never holds it (it goes by PIP_EXTRA_INDEX_URL), the files on the host that hold it are 0600,
and an index URL that would add pip options (a newline) or is not http(s) is refused naming the variable."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hvc_redact_url import redact_url
from hvc_settings import hvc_rule_errors
from test_python_env_plan import DEBIAN_AMD64, UBUNTU_GPU, WH, decide

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "roles" / "python_env" / "tasks"
SECRET_URL = "https://alice:s3cr3t@pypi.example/simple"
FILL = {"python_env_torch_version": "2.13.0", "python_env_wheelhouse": WH}


@pytest.mark.parametrize(("url", "shown"), [
    (SECRET_URL, "https://alice:****@pypi.example/simple"),
    ("https://t0ken@pypi.example/simple", "https://****@pypi.example/simple"),
    ("https://a:b@c@pypi.example/p?q=@x", "https://a:****@pypi.example/p?q=@x"),
    ("https://download.pytorch.org/whl/cpu", "https://download.pytorch.org/whl/cpu"),
    ("", ""),
])
def test_redact_url_masks_the_password_or_token_only(url, shown):
    assert redact_url(url) == shown


def test_the_plan_never_shows_the_password_and_the_host_file_gets_it():
    d, failed = decide(DEBIAN_AMD64, python_env_torch_version="2.13.0", python_env_wheelhouse_fill=False,
                       python_env_wheelhouse_fill_bool=False, python_env_torch_cpu_index_url=SECRET_URL)
    assert not failed
    assert "s3cr3t" not in json.dumps(d["plan"])
    assert d["plan"]["pip_options"] == ["--extra-index-url https://alice:****@pypi.example/simple"]
    # the requirements file (0600) is written from pip_options: the URL as given
    assert d["pip_options"] == ["--extra-index-url " + SECRET_URL]


@pytest.mark.parametrize(("facts", "variables", "attempt"), [
    (DEBIAN_AMD64, {"python_env_torch_cpu_index_url": SECRET_URL}, 1),  # +cpu: the pip configuration first
    (UBUNTU_GPU, {"python_env_torch_cuda_index_url": SECRET_URL}, 0),
])
def test_the_fill_passes_an_index_with_credentials_by_environment(facts, variables, attempt):
    d, failed = decide(facts, {"wheelhouse_is_dir": True}, **FILL, **variables)
    assert not failed and d["fill"]
    assert "s3cr3t" not in json.dumps(d["plan"]) and "s3cr3t" not in json.dumps(d["fill"])
    assert not any("--extra-index-url" in a for a in d["fill"]["attempts"][attempt])
    assert d["fill"]["env"][attempt] == {"PIP_EXTRA_INDEX_URL": redact_url(SECRET_URL)}
    assert d["fill_env"][attempt] == {"PIP_EXTRA_INDEX_URL": SECRET_URL}
    assert [e for i, e in enumerate(d["fill_env"]) if i != attempt] == [{}] * (len(d["fill_env"]) - 1)


def test_an_index_without_credentials_stays_on_the_command_line():
    d, failed = decide(DEBIAN_AMD64, {"wheelhouse_is_dir": True}, **FILL)
    assert not failed
    first, second = d["fill"]["attempts"]
    assert "--extra-index-url" not in first and second[-2:] == ["--extra-index-url", "https://download.pytorch.org/whl/cpu"]
    assert d["fill"]["env"] == d["fill_env"] == [{}, {}]


def _tasks(name):
    return yaml.safe_load((TASKS / name).read_text(encoding="utf-8"))


def test_the_files_that_hold_an_index_url_are_0600():
    venv = [t for t in _tasks("venv.yml") if "ansible.builtin.template" in t]
    assert [t["ansible.builtin.template"]["src"] for t in venv] == ["requirements.txt.j2"]
    assert venv[0]["ansible.builtin.template"]["mode"] == "0600"
    conda = [t for t in _tasks("conda.yml") if "ansible.builtin.template" in t]
    assert [t["loop"] for t in conda] == [["environment.yml", "requirements.txt"]]
    assert [t["ansible.builtin.template"]["mode"] for t in conda] == ["0600"]


def test_the_fill_commands_take_the_environment_of_their_set():
    commands = [t for t in _tasks("wheelhouse-fill.yml") if "pip download" in t["name"] or "second try" in t["name"]]
    assert len(commands) == 2 and all("__python_env_fill_envs" in t["environment"] for t in commands)


@pytest.mark.parametrize("name", ["python_env_torch_cpu_index_url", "python_env_torch_cuda_index_url"])
@pytest.mark.parametrize("value", ["https://pypi.example/simple\n--trusted-host evil.example",
                                   "https://pypi.example/simple --no-deps", "ftp://pypi.example/simple",
                                   "pypi.example/simple"])
def test_an_index_url_that_adds_pip_options_is_refused_naming_the_variable(name, value):
    errors = hvc_rule_errors({name: value}, str(REPO / "roles"), "h")
    assert len(errors) == 1 and errors[0].startswith(f"host h: {name} is ")
    assert "allowed: an http(s) URL without spaces or newlines, or empty" in errors[0]


@pytest.mark.parametrize("value", [SECRET_URL + "\n--trusted-host evil.example", SECRET_URL + " --no-deps",
                                   "ftp://alice:s3cr3t@pypi.example/simple"])
def test_the_refusal_of_an_index_url_with_credentials_does_not_repeat_them(value):
    """The message names the variable and shows the URL, its password masked: it reaches the play's output."""
    errors = hvc_rule_errors({"python_env_torch_cpu_index_url": value}, str(REPO / "roles"), "h")
    assert len(errors) == 1 and "s3cr3t" not in errors[0], errors
    assert "python_env_torch_cpu_index_url is '" in errors[0] and "alice:****@pypi.example/simple" in errors[0]


def test_good_index_urls_pass_and_the_role_checks_them_alone():
    assert hvc_rule_errors({"python_env_torch_cpu_index_url": SECRET_URL,
                            "python_env_torch_cuda_index_url": ""}, str(REPO / "roles"), "h") == []
    decide_yml = (TASKS / "decide.yml").read_text(encoding="utf-8")
    check = next(t for t in yaml.safe_load(decide_yml) if "index URLs" in t["name"])
    assert "hvc_rule_errors" in check["vars"]["__errors"]
    assert "python_env_torch_cpu_index_url" in check["vars"]["__errors"]
    assert "python_env_torch_cuda_index_url" in check["vars"]["__errors"]
