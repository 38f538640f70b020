"""The live view of a run: dashboard, header, worker grid, the charts' feed and the results."""
