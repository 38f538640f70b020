"""What executes a run: the runner, its worker processes and what they send, live figures."""
