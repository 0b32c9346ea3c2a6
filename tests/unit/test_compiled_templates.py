"""hvc_linear's CompiledTemplates (plugins/strategy/hvc_linear.py): while the strategy runs, a template string
is compiled once and rendered with each host's variables; ansible-core alone compiles it at every render.

Real ansible-core templars; the compiles are counted at Jinja's entry point (AnsibleEnvironment.from_string,
which templates and `when` expressions both go through).
"""
from __future__ import annotations

import pytest
from ansible._internal._templating._jinja_bits import AnsibleEnvironment
from ansible.errors import AnsibleError
from ansible.template import Templar, trust_as_template

import hvc_linear  # plugins/strategy (tests/unit/conftest.py puts it on sys.path)

CORE = ".".join(hvc_linear.ANSIBLE_CORE_VERSION.split(".")[:2])
# The inline run and the template cache lean on 2.19's internals; elsewhere the plugin is ansible's linear strategy.
on_2_19 = pytest.mark.skipif(CORE != "2.19", reason=f"ansible-core {CORE}: the plugin runs as linear (2.19 only)")


@pytest.fixture
def compiles(monkeypatch):
    """The number of Jinja compiles so far (a list: read its length)."""
    seen = []
    original = AnsibleEnvironment.from_string

    def counting(self, source, *args, **kwargs):
        seen.append(source)
        return original(self, source, *args, **kwargs)

    monkeypatch.setattr(AnsibleEnvironment, "from_string", counting)
    return seen


def render_for_hosts(template: str, hosts: int) -> list:
    """What a task argument and a `when` give for each host: a new templar per host-task, as ansible makes."""
    out = []
    for n in range(hosts):
        templar = Templar(variables={"n": n})
        out.append((templar.template(trust_as_template(template)),
                    templar.evaluate_conditional(trust_as_template("n % 2 == 0"))))
    return out


@pytest.mark.skipif(CORE not in ("2.19", "2.21"), reason=f"ansible-core {CORE} was not measured")
def test_the_feature_check_knows_the_ansible_core_it_was_written_for():
    """Inline and the cache on 2.19 (whose internals the plugin was written and tested against), off on 2.21 (a
    Python >= 3.12 controller's newest, measured: TaskExecutor's and TemplateEngine's signatures differ)."""
    assert hvc_linear.INLINE == hvc_linear.CACHE_TEMPLATES == (CORE == "2.19")


@on_2_19
def test_each_template_compiles_once_across_hosts_and_renders_per_host(compiles):
    expected = [(n + 1, n % 2 == 0) for n in range(5)]
    assert render_for_hosts("{{ n + 1 }}", 5) == expected
    without = len(compiles)
    assert without == 10  # ansible-core alone: both, for every host
    compiles.clear()
    with hvc_linear.CompiledTemplates():
        assert render_for_hosts("{{ n + 1 }}", 5) == expected
    assert len(compiles) == 2


@on_2_19
def test_the_engine_is_as_before_after_the_strategy(compiles):
    original = {step: getattr(hvc_linear.TemplateEngine, step) for step in hvc_linear._COMPILE_STEPS}
    with hvc_linear.CompiledTemplates():
        assert all(getattr(hvc_linear.TemplateEngine, step) is not original[step] for step in original)
    assert {step: getattr(hvc_linear.TemplateEngine, step) for step in original} == original
    render_for_hosts("{{ n }}", 2)
    assert len(compiles) == 4


@on_2_19
def test_a_search_path_is_part_of_the_key(tmp_path, compiles):
    """An include (or a template lookup) finds files through the environment's loader: the same source
    under two search paths is two templates."""
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "part.j2").write_text(f"from {name}")
    source = trust_as_template("{% include 'part.j2' %}")
    with hvc_linear.CompiledTemplates():
        found = [Templar(variables={}).copy_with_new_env(searchpath=[str(tmp_path / name)]).template(source)
                 for name in ("one", "two", "one")]
    assert found == ["from one", "from two", "from one"]
    assert compiles.count(source) == 2


@on_2_19
def test_overrides_are_part_of_the_key(compiles):
    """The template module's delimiters (Templar.template's overrides) change what the same text means."""
    source = trust_as_template("[[ n ]] {{ n }}")
    with hvc_linear.CompiledTemplates():
        templar = Templar(variables={"n": 3})
        assert templar.template(source) == "[[ n ]] 3"
        assert templar.template(source, overrides={"variable_start_string": "[[", "variable_end_string": "]]"}) \
            == "3 {{ n }}"
        assert templar.template(source) == "[[ n ]] 3"
    assert len(compiles) == 2


@on_2_19
def test_a_failed_compile_is_not_kept(compiles):
    with hvc_linear.CompiledTemplates():
        for _ in range(2):
            with pytest.raises(AnsibleError, match="Syntax error"):
                Templar(variables={"n": 1}).template(trust_as_template("{{ n + }}"))
    assert len(compiles) == 2


def test_another_ansible_core_warns_and_runs_linear(monkeypatch):
    """Where ansible-core's internals are not 2.19's, the opt-in strategy says it runs as linear, and does."""
    warned = []
    monkeypatch.setattr(hvc_linear, "INLINE", False)
    monkeypatch.setattr(hvc_linear, "CACHE_TEMPLATES", False)
    monkeypatch.setattr(hvc_linear.LinearStrategy, "run", lambda self, iterator, play_context: "linear ran")
    monkeypatch.setattr(hvc_linear.Display, "warning", lambda self, msg, *a, **k: warned.append(msg))
    assert object.__new__(hvc_linear.StrategyModule).run(None, None) == "linear ran"
    assert len(warned) == 1 and "ansible.builtin.linear" in warned[0]


@on_2_19
def test_ansible_core_2_19_runs_inline_without_a_warning(monkeypatch):
    warned = []
    monkeypatch.setattr(hvc_linear.LinearStrategy, "run", lambda self, iterator, play_context: "ran")
    monkeypatch.setattr(hvc_linear.Display, "warning", lambda self, msg, *a, **k: warned.append(msg))
    assert object.__new__(hvc_linear.StrategyModule).run(None, None) == "ran" and warned == []
