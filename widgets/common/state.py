"""Keep a widget's save_state() dict in QSettings and give it back with restore_state().

Each widget owns its state as a plain dict with a "version" key and ignores keys it does not know
(friture's dockmanager habit), so an older or newer settings file never breaks start-up. The dict is
stored as JSON under one key per widget: QSettings' own type guessing mangles nested dicts and
lists of ints differently per platform.
"""
from __future__ import annotations

import json
import logging

from PySide6.QtCore import QSettings

log = logging.getLogger(__name__)


def store_state(key: str, widget, settings: QSettings | None = None) -> None:
    """settings[key] = JSON of widget.save_state()."""
    settings = settings or QSettings()
    settings.setValue(key, json.dumps(widget.save_state(), sort_keys=True))
    settings.sync()


def load_state(key: str, widget, settings: QSettings | None = None) -> bool:
    """widget.restore_state(settings[key]); False (and a log line) if absent or unreadable."""
    settings = settings or QSettings()
    raw = settings.value(key)
    if raw is None:
        return False
    try:
        state = json.loads(raw)
    except (TypeError, ValueError) as exc:
        log.warning("ignoring unreadable saved state %r in %s: %s", key, settings.fileName(), exc)
        return False
    if not isinstance(state, dict):
        log.warning("ignoring saved state %r in %s: not a dict", key, settings.fileName())
        return False
    widget.restore_state(state)
    return True
