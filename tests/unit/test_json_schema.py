"""Issue 44: every JSON document (--json of plan, rollout, retry, check, wheelhouse, report, run) carries
`schema_version` and validates against its published schema (src/horovod_cluster/schemas, JSON Schema 2020-12)."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from horovod_cluster.job import JobResult
from horovod_cluster.results import SCHEMA_VERSION, PlanResult, RolloutResult, from_json
from horovod_cluster.outcome import RunOutcome

CHECK = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "sandbox-check.json"
SCHEMAS = {path.name.split(".")[0]: json.loads(path.read_text())
           for path in resources.files("horovod_cluster").joinpath("schemas").iterdir() if path.name.endswith(".json")}
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())


def validate(document: dict) -> None:
    """Against the schema its `kind` names, as a user would (jsonschema with the schemas' own ids)."""
    schema = SCHEMAS[document["kind"]]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema, registry=REGISTRY).validate(document)


def event(kind: str, host: str, **data) -> dict:
    return {"event": kind, "event_data": {"host": host, "play": "p", **data}}


def rollout() -> RolloutResult:
    events = [{"event": "playbook_on_play_start", "event_data": {"play": "p"}},
              event("runner_on_ok", "a", task="t", duration=0.5, res={"changed": True, "warnings": ["w"]}),
              event("runner_on_failed", "b", task="t", res={"msg": "boom"})]
    stats = {"ok": {"a": 1}, "changed": {"a": 1}, "failures": {"b": 1}}
    return RolloutResult.from_outcome(RunOutcome("site.yml", "failed", 2, Path("/x"), 1.0, 2.0, events, stats),
                                      limit="a,b", options={"tags": ["t"]})


def documents() -> dict[str, dict]:
    run = rollout()
    plan = PlanResult(hosts={"a": {"horovod": {"action": "build", "method": "pip", "reason": "new"}}}, run=run,
                      job_groups={"groups": [{"controller": "gloo", "hosts": ["a"], "tensors": "cpu",
                                              "agree": {"python": "3.11", "gloo_transport": "tcp"}}],
                                  "spans": {"gloo": True}, "reasons": {}})
    job = JobResult(job_id="j", rc=0, launcher="a", hosts=["a", "b"], controller="gloo", np=2, workdir="/w",
                    command=["horovodrun"], started=1.0, finished=2.0, stopped={"a": 1})
    return {"rollout": run.to_dict(), "plan": plan.to_dict(), "check": from_json(CHECK.read_text()).to_dict(),
            "job": json.loads(job.to_json())}


@pytest.mark.parametrize("kind", ["rollout", "plan", "check", "job"])
def test_real_documents_validate(kind):
    document = documents()[kind]
    assert document["schema_version"] == SCHEMA_VERSION == 1
    validate(json.loads(json.dumps(document)))  # as written to a file


@pytest.mark.parametrize("kind, path, bad", [
    ("rollout", ["hosts", "b", "failure"], "drop:message"),
    ("rollout", ["rc"], "2"),
    ("plan", ["run"], "drop:hosts"),
    ("check", [], "drop:findings"),
    ("check", ["job_groups"], "two"),  # the plan schema's, by reference
    ("plan", ["job_groups", "spans"], "two"),
    ("check", ["unhealthy_hosts"], "none"),
    ("job", ["np"], "two"),
    ("job", [], "drop:schema_version"),
])
def test_a_missing_key_or_a_wrong_type_fails(kind, path, bad):
    document = documents()[kind]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if bad.startswith("drop:"):
        target = parent[path[-1]] if path else document
        del target[bad[5:]]
    else:
        parent[path[-1]] = None if bad == "none" else bad
    with pytest.raises(jsonschema.ValidationError):
        validate(document)


def test_a_newer_schema_version_is_refused_by_report():
    document = {**rollout().to_dict(), "schema_version": SCHEMA_VERSION + 1}
    with pytest.raises(ValueError, match="newer"):
        from_json(json.dumps(document))
    del document["schema_version"]  # saved before versions: the same form
    assert from_json(json.dumps(document)).hosts["b"].failure.message == "boom"


@pytest.mark.parametrize("command", [["plan", "-i", "local.yml"], ["rollout", "-i", "inventory.yml"]])
def test_the_cli_documents_validate(tmp_path, monkeypatch, command):
    """The documents of real runs (ansible-playbook over the API fixtures' local hosts), as --json writes them."""
    from click.testing import CliRunner

    from horovod_cluster.cli import main
    fixtures = CHECK.parents[1] / "api"
    monkeypatch.setenv("HOROVOD_CLUSTER_CONTENT", str(fixtures / "content"))
    monkeypatch.setenv("HOROVOD_CLUSTER_ARTIFACTS", str(tmp_path / "runs"))
    # its own cache, so its own inventory lock: the integration tests roll out the same fixture inventory
    monkeypatch.setenv("HOROVOD_CLUSTER_CACHE", str(tmp_path / "cache"))
    name, _, inventory = command
    run = CliRunner().invoke(main, [name, "-i", str(fixtures / inventory), "--json", str(tmp_path / "out.json")])
    assert run.exit_code in (0, 1), run.output
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["kind"] == name and document["schema_version"] == SCHEMA_VERSION
    validate(document)
