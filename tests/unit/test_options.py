"""ansible-playbook's options are written once (horovod_cluster/ansible/options.py): an option added
there, or on the command line, or to Cluster(...) alone, fails here."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

from horovod_cluster import Cluster, cli
from horovod_cluster.ansible.options import BECOME_PROMPT, VAULT_PROMPT, AnsibleOptions, keyword

OPTIONS = dataclasses.fields(AnsibleOptions)
# Cluster's own keywords, not ansible-playbook's
CLUSTER_OWN = {"self", "inventory", "content_dir", "artifacts_dir", "keep_runs", "on_event"}
# The commands' own options, not ansible-playbook's
COMMAND_OWN = {"inventory", "json_file", "junit_file", "html_file", "artifacts_dir", "keep_runs", "limit", "list_hosts",
               "list_tags", "list_tasks", "tags", "skip_tags", "serial", "max_fail_percentage", "check_mode", "diff",
               "facts_dir", "smoke", "bench", "command", "np", "controller", "copy", "workdir", "hostfile", "env",
               "timeout", "elastic", "min_np", "max_np", "tensors"}


def test_cluster_takes_each_option_and_no_other():
    keywords = set(inspect.signature(Cluster.__init__).parameters) - CLUSTER_OWN
    assert keywords == {keyword(option) for option in OPTIONS}


@pytest.mark.parametrize("name", ["plan", "wheelhouse", "rollout", "retry", "check", "run"])
def test_each_command_takes_each_option_and_no_other(name):
    params = {param.name: param for param in cli.main.commands[name].params}
    assert set(params) - COMMAND_OWN == {option.name for option in OPTIONS}
    for option in OPTIONS:
        assert set(params[option.name].opts) == set(option.metadata["flags"])
        assert params[option.name].help == option.metadata["help"]


def test_the_cli_says_nothing_of_an_option_the_table_lacks():
    assert set(cli._CLICK) <= {option.name for option in OPTIONS}


def test_every_option_reaches_ansible():
    """Each field set to a value: ansible-playbook's argv has its flag, or ansible-runner takes it by name."""
    given = AnsibleOptions(extra_vars=["a=1"], forks=3, user="u", become=True, become_password="bp",
                           private_key="/k", vault_password_files=["/v"], vault_password="vp", verbosity=2)
    assert {field.name for field in OPTIONS} == {field.name for field in dataclasses.fields(given)}
    assert given.cmdline() == ["-e", "a=1", "--user", "u", "--become", "--ask-become-pass", "--private-key", "/k",
                               "--vault-password-file", "/v", "--ask-vault-pass"]
    assert given.vault_args() == ["--vault-password-file", "/v", "--ask-vault-pass"]
    assert given.passwords() == {BECOME_PROMPT: "bp", VAULT_PROMPT: "vp"}
    by_runner_keyword = {option.name for option in OPTIONS if not option.metadata["argv"]}
    assert by_runner_keyword == {"forks", "verbosity"}  # Runner.run passes these as ansible-runner's own
    assert "bp" not in repr(given) and "vp" not in repr(given)
    assert AnsibleOptions().cmdline() == [] and AnsibleOptions().passwords() == {}


def test_cluster_keywords_become_the_options(tmp_path):
    cluster = Cluster(tmp_path, extravars="x=1", vault_password_file=tmp_path / "pw", forks=2, verbosity=1)
    assert cluster.options.extra_vars == ("x=1",) and cluster.options.forks == 2 and cluster.options.verbosity == 1
    assert cluster.options.vault_password_files == (str(tmp_path / "pw"),)
    mapped = Cluster(tmp_path, extravars={"x": 1})
    assert mapped.options.extra_vars == () and mapped.extravars == {"x": 1}

