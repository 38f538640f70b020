"""Where a run's users run: this machine or the hosts of a Dask cluster."""
