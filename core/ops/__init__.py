"""Running the service: logs, metrics, traces and errors, health, retention, queueing jobs after
commit, and the local HTTPS server `make run` serves with (docs/architecture.md#apps)."""
