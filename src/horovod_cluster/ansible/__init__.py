"""Driving ansible-playbook through ansible-runner: `runner` (runs, inventory, options) and `events` (listeners)."""
