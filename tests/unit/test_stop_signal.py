"""The rollout's stop on SIGINT/SIGTERM reaches ansible-playbook whenever the signal comes."""
import signal
import subprocess

from horovod_cluster.ansible.runner import _Stop


def _playbook_stand_in() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"])


def test_a_signal_before_the_first_event_still_stops_the_playbook():
    """CI cancels a job while ansible-playbook starts: no event has named its pid yet, and ansible-runner's
    cancel (checked only between reads of its output) no longer fires once that first event arrives."""
    playbook = _playbook_stand_in()
    stop = _Stop()
    stop.received(signal.SIGTERM, None)
    assert stop.cancel(), "before the first event ansible-runner's cancel stops the run"
    stop.event({"event": "playbook_on_start", "pid": playbook.pid})
    assert not stop.cancel()
    assert playbook.wait(timeout=10) == -signal.SIGTERM


def test_a_signal_after_the_first_event_goes_to_the_playbook():
    playbook = _playbook_stand_in()
    stop = _Stop()
    stop.event({"event": "playbook_on_start", "pid": playbook.pid})
    assert not stop.cancel()
    stop.received(signal.SIGTERM, None)
    assert playbook.wait(timeout=10) == -signal.SIGTERM
    assert not stop.cancel() and stop.asked
