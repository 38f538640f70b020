"""Stored runs: the history table, the Compare tab, its verdicts and answers, an A/B session's answer."""
