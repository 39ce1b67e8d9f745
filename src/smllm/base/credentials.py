"""Where secrets live: credential stores, and the names of files that hold secrets anywhere.

One list for everyone who needs it: the shell analyser (reading a store escalates, sending
it anywhere is denied), the gate's Read/Grep check, and the sandbox settings install
writes (the stores are hidden from sandboxed commands unless the policy allows reading
them). The cheap substring tests (:data:`HINTS`) are derived from the same lists, so a
store added here is also one the hot path's pre-check notices:

>>> all(any(h in "~/" + s for h in HINTS) for s in HOME_STORES)
True
>>> any(h in "src/app.py" for h in HINTS)
False

smllm's own journals and state are secrets too; their folders move with ``SMLLM_HOME``
and the platform, so they are not listed here but asked of :mod:`smllm.base.paths`
(:func:`smllm.base.protected.own_folders`).

Hot path: no imports.
"""

from __future__ import annotations

#: credential stores under the home folder (relative to it)
HOME_STORES: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".boto",
    ".s3cfg",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/rclone",
    ".terraform.d/credentials.tfrc.json",
    ".password-store",
    ".local/share/keyrings",
    ".claude/.credentials.json",
)
#: credential stores at absolute paths
ABSOLUTE_STORES: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow", "/etc/ssh", "/root",
                                    "/var/lib/smllm")
#: file names that hold secrets wherever they are
SECRET_FILES = frozenset({
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    ".netrc", ".pgpass", ".git-credentials", "credentials.json", ".npmrc", ".pypirc",
})
#: endings of file names that hold keys wherever they are
SECRET_SUFFIXES: tuple[str, ...] = (".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx")
#: public halves and host lists inside credential folders: not secrets
PUBLIC_NAMES: tuple[str, ...] = ("known_hosts", "known_hosts.old", "authorized_keys", "config")

#: folders under home that hold others' stores: a hint is the component below them
_CONTAINERS = (".config", ".local", "share")


def _hint(store: str) -> str:
    """The part of a store's path that any mention of it contains: its first component
    below the generic folders (``.config/gcloud`` -> ``gcloud``), the store's own name for
    a file in a generic folder (``.config/gh/hosts.yml`` -> ``/gh/``)."""
    parts = [p for p in store.strip("/").split("/") if p]
    while len(parts) > 1 and parts[0] in _CONTAINERS:
        parts = parts[1:]
    first = parts[0]
    return first if len(first) >= 4 else f"/{first}"


def _last(store: str) -> str:
    """An absolute store's own name (``/etc/shadow`` -> ``shadow``; short ones with their
    slash: ``/root`` -> ``/root``)."""
    last = store.rstrip("/").rsplit("/", 1)[-1]
    return last if len(last) >= 5 else f"/{last}"


#: substrings of a path that may name a secret (a cheap test before the real one)
HINTS: tuple[str, ...] = tuple(dict.fromkeys([
    *(_hint(s) for s in HOME_STORES),
    *(_last(s) for s in ABSOLUTE_STORES),
    "credential", "id_", *SECRET_SUFFIXES,
]))
#: what may name a secret *file* a command sends somewhere: the stores, and ``.env`` files
FLOW_HINTS: tuple[str, ...] = (*HINTS, ".env")


def sandbox_hidden() -> list[str]:
    """The home folder's stores as Claude Code's sandbox settings spell them (``~/…``).
    The absolute ones are not hidden there: ``/root`` is the home of a root user's
    projects, and the system's own stores are not readable by a user's sandbox anyway."""
    return [f"~/{s}" for s in HOME_STORES]
