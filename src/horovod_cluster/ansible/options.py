"""ansible-playbook's own options, written once: each field of `AnsibleOptions` carries its command-line
names and help (the cli builds its click options from them), its `Cluster(...)` keyword, and the argument
ansible-playbook gets (the runner builds its argv from them). tests/unit/test_options.py holds the three together."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any

# ansible's prompts (ANSIBLE_AGNOSTIC_BECOME_PROMPT is set, so become says BECOME for any method)
BECOME_PROMPT = r"^BECOME password.*:\s*?$"
VAULT_PROMPT = r"^Vault password.*:\s*?$"


def _option(default: Any, *flags: str, help: str, keyword: str = "", argv: str = "", answers: str = "",
            asks: str = "", inventory: bool = False, **cli: Any) -> Any:
    """One option. flags/help/cli: the command line's (`cli`: click's other arguments, plain values);
    keyword: Cluster's (default: the field's name); argv: the flag ansible-playbook gets ("" when
    ansible-runner takes it as a keyword); answers: the prompt of ansible's a password answers, and
    asks: the command line's own prompt for it; inventory: ansible-inventory takes it too."""
    meta = {"flags": flags, "help": help, "keyword": keyword, "argv": argv, "answers": answers, "asks": asks,
            "inventory": inventory, "cli": cli}
    return field(default=default, repr=not answers, metadata=meta)


@dataclass
class AnsibleOptions:
    """ansible-playbook's own options, with its meaning. Paths (`@file` extra vars, the key, vault
    password files) are made absolute here: ansible runs in the content folder, not the caller's."""

    extra_vars: Sequence[str] = _option(  # each `-e` as given: "k=v k2=v2", JSON or YAML, "@file"
        (), "-e", "--extra-vars", keyword="extravars", argv="-e", multiple=True, metavar="VARS",
        help="passed to ansible as given: key=value pairs, JSON or YAML, or @file (repeatable)")
    forks: int | None = _option(None, "-f", "--forks", help="hosts ansible works on at once")
    user: str | None = _option(None, "-u", "--user", argv="--user", help="connect as this user")
    become: bool = _option(False, "-b", "--become", argv="--become", is_flag=True, help="run operations with become")
    become_password: str | None = _option(None, "-K", "--ask-become-pass", argv="--ask-become-pass",
                                          answers=BECOME_PROMPT, asks="BECOME password",
                                          help="ask for the become password")
    private_key: str | Path | None = _option(None, "--private-key", "--key-file", argv="--private-key",
                                             help="the SSH private key to connect with")
    vault_password_files: Sequence[str | Path] = _option(
        (), "--vault-password-file", keyword="vault_password_file", argv="--vault-password-file", inventory=True,
        multiple=True, help="vault password file or script (repeatable)")
    vault_password: str | None = _option(None, "--ask-vault-pass", argv="--ask-vault-pass", answers=VAULT_PROMPT,
                                         asks="Vault password", inventory=True, help="ask for the vault password")
    verbosity: int = _option(0, "-v", "--verbose", count=True,
                             help="ansible verbosity (-v ... -vvvv); also shows ansible's own output")

    def __post_init__(self) -> None:
        self.extra_vars = tuple(absolute_at(v) for v in self.extra_vars)
        self.private_key = str(Path(self.private_key).expanduser().resolve()) if self.private_key else None
        self.vault_password_files = tuple(str(Path(f).expanduser().resolve()) for f in self.vault_password_files)

    @classmethod
    def from_keywords(cls, given: Mapping[str, Any]) -> AnsibleOptions:
        """From Cluster's keywords (others in `given` are not looked at): one value or several where a
        field takes several (a mapping of extra vars is not ansible's -e: Cluster passes it on itself)."""
        values = {}
        for option in fields(cls):
            value = given.get(keyword(option), option.default)
            if isinstance(option.default, tuple):
                value = () if value is None or isinstance(value, Mapping) else (
                    [value] if isinstance(value, (str, Path)) else list(value))
            values[option.name] = value
        return cls(**values)

    def _args(self, inventory_only: bool = False, extra_vars: bool = True) -> list[str]:
        args: list[str] = []
        for option in fields(self):
            flag, value = option.metadata["argv"], getattr(self, option.name)
            if not flag or (inventory_only and not option.metadata["inventory"]) or (
                    option.name == "extra_vars" and not extra_vars):
                continue
            if option.metadata["answers"] or isinstance(value, bool):  # a flag: asks for a password, or switches on
                args += [flag] if (value is not None if option.metadata["answers"] else value) else []
            elif isinstance(value, tuple):
                args += [arg for each in value for arg in (flag, str(each))]
            elif value:
                args += [flag, str(value)]
        return args

    def vault_args(self) -> list[str]:
        """The vault options (ansible-inventory takes them too)."""
        return self._args(inventory_only=True)

    def cmdline(self, extra_vars: bool = True) -> list[str]:
        """ansible-playbook arguments (forks and verbosity go through ansible-runner's own kwargs); the runner
        leaves out the extra vars (`extra_vars=False`) and gives them as files."""
        return self._args(extra_vars=extra_vars)

    def passwords(self) -> dict[str, str]:
        """ansible-runner's `passwords`: the answer to each prompt the options above make ansible ask."""
        answers = {option.metadata["answers"]: getattr(self, option.name) for option in fields(self)}
        return {prompt: answer for prompt, answer in answers.items() if prompt and answer is not None}


def keyword(option: Field) -> str:
    """The `Cluster(...)` keyword of an option."""
    return option.metadata["keyword"] or option.name


def absolute_at(value: str) -> str:
    """`@file` (an extra-vars file, a --limit host list) relative to the caller's folder, made absolute."""
    return "@" + str(Path(value[1:]).expanduser().resolve()) if value.startswith("@") else value
