"""Server passwords live in the OS keyring when there is one; otherwise they are asked each time.

They are never written to QSettings, scenario files or the results file.
"""
from __future__ import annotations

import logging

SERVICE = "Tickbench"
log = logging.getLogger(__name__)


def _usable_keyring():
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) < 1:
        return None  # no real keyring: the chainer and null backends would store nothing
    return keyring


def keyring_available() -> bool:
    return _usable_keyring() is not None


def save_password(profile: str, user: str, password: str) -> bool:
    """True if stored in the keyring; False means the app must ask again next time."""
    keyring = _usable_keyring()
    if keyring is None:
        return False
    try:
        keyring.set_password(SERVICE, f"{profile}/{user}", password)
        return True
    except Exception as exc:  # a locked or broken keyring must not break the app
        log.warning("could not store password in keyring: %s", exc)
        return False


def load_password(profile: str, user: str) -> str | None:
    keyring = _usable_keyring()
    if keyring is None:
        return None
    try:
        return keyring.get_password(SERVICE, f"{profile}/{user}")
    except Exception as exc:
        log.warning("could not read password from keyring: %s", exc)
        return None


def forget_password(profile: str, user: str) -> None:
    keyring = _usable_keyring()
    if keyring is None:
        return
    try:
        keyring.delete_password(SERVICE, f"{profile}/{user}")
    except Exception:  # nothing stored, or a locked keyring: forgetting has nothing to do
        pass


class KeyringPasswords:
    """The password store a ``TargetRegistry`` asks: the OS keyring, when there is one."""

    def load(self, profile: str, user: str) -> str | None:
        return load_password(profile, user)

    def save(self, profile: str, user: str, password: str) -> bool:
        return save_password(profile, user, password)

    def forget(self, profile: str, user: str) -> None:
        forget_password(profile, user)

    def available(self) -> bool:
        return keyring_available()
