"""The lights of the targets panel (``widgets.targets.panel``): the state of a target's last
check, per node and overall, with the short word and the detail beside it, and the round icon
each state is drawn with.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from widgets.common.theme import OKABE_ITO
from workloads.targets.dolphindb.cluster import ClusterProfile
from workloads.targets.engines import DDB
from workloads.targets.profiles import Profile, ServerProfile

LIGHTS = {"ready": OKABE_ITO["bluish_green"], "ok": OKABE_ITO["bluish_green"], "failed": OKABE_ITO["vermillion"],
          "testing": OKABE_ITO["sky_blue"], "unknown": "#8C8C8C"}
VERDICT_WORDS = {"ok": "ok", "refused": "refused", "timed_out": "timed out", "wrong_password": "wrong password",
                 "not_initialised": "not initialised", "error": "error"}


@dataclass
class Light:
    state: str = "unknown"       # unknown | testing | ok | failed | ready
    word: str = "not tested"     # short text beside the light
    detail: str = "Not tested yet: press Test."


@dataclass
class _Profile:
    """What the panel shows of a registry profile: the lights of its last checks."""
    profile: ClusterProfile | ServerProfile      # the registry's, never holding a password
    db_prefix: str
    lights: dict[str, Light] = field(default_factory=dict)   # node address -> light
    note: str = ""               # last discovery's remark
    generation: int = 0          # results of older jobs are ignored
    pending: int = 0
    kind: str = DDB

    @property
    def key(self) -> str:
        return Profile(self.kind, self.profile, self.db_prefix).key

    @property
    def addresses(self) -> list[str]:
        if self.kind == DDB:
            return [n.address for n in self.profile.nodes]
        return [f"{self.profile.host}:{self.profile.port}"]

    def light(self, address: str) -> Light:
        return self.lights.setdefault(address, Light())

    def overall(self) -> Light:
        lights = [self.light(address) for address in self.addresses]
        if any(l.state == "testing" for l in lights):
            return Light("testing", "testing…", "Testing the nodes…")
        failed = [l for l in lights if l.state == "failed"]
        if failed:
            words = {l.word for l in failed}
            word = words.pop() if len(words) == 1 and len(failed) == len(lights) else \
                f"{len(failed)} of {len(lights)} failed"
            return Light("failed", word, failed[0].detail)
        if lights and all(l.state == "ok" for l in lights):
            if self.kind != DDB:
                return Light("ok", "ok", lights[0].detail)
            return Light("ok", "ok", f"All {len(lights)} node{'s' if len(lights) > 1 else ''} answered.")
        return Light()


def light_icon(colour: str, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor(colour).darker(130))
    painter.setBrush(QColor(colour))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    icon = QIcon(pixmap)
    icon.addPixmap(pixmap, QIcon.Mode.Selected)     # keep the colour on a selected row (no tint)
    return icon
