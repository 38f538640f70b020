"""Load from several client machines through a Dask cluster (``dask.distributed``).

A scenario that names a scheduler places its users across the cluster's workers (``placement``);
each user is still a process of its own, started on its host by a task pinned there
(``host_task``), running the same worker code as a local run. The run's process talks to the
hosts only through Dask: the release is a Dask ``Event``, records come back through a Dask
``Queue`` in the same columnar batches (``launcher``). Clocks are compared by round trips
(``clock``), and every host's environment is captured and compared (``hosts``).

``distributed`` is an optional extra (``tickbench[distributed]``), imported only here and only
when a scenario names a scheduler.
"""
from __future__ import annotations

INSTALL_HINT = "load from several machines needs Dask: pip install 'tickbench[distributed]'"


def import_distributed():
    """The ``distributed`` module, or an ImportError that says which extra to install."""
    try:
        import distributed
    except ImportError as exc:            # an optional extra: say how to get it
        raise ImportError(INSTALL_HINT) from exc
    return distributed
