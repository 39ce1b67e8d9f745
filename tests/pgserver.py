"""A real PostgreSQL for the tests: Debian's server on a Unix socket in a temporary folder.

``postgres`` (session-scoped) runs initdb and the server once per test run, as the
unprivileged user ``nobody`` when the suite runs as root, with password authentication
(scram) so that the tests show credentials coming from a pgpass file, never argv; it
is stopped by its PID at the end. ``store_db`` gives each test an empty database.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SUPERUSER = "postgres"
PASSWORD = "smllm-test-secret"
ROLES = ("alice", "bob", "carol")


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        pytest.fail(f"PostgreSQL's {name} is missing: apt-get install postgresql "
                    "(tests/run.sh installs it)")
    return found[-1]


@dataclass
class Server:
    socket_dir: str
    pgpass: str
    pid: int

    def url(self, db: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@/{db}?host={self.socket_dir}"

    def connect(self, db: str = "postgres", user: str = SUPERUSER):  # type: ignore[no-untyped-def]
        import psycopg

        return psycopg.connect(self.url(db, user), autocommit=True)


def start(folder: str, *, durable: bool = False) -> subprocess.Popen[bytes]:
    """initdb and start a server in ``folder`` (owned by the user it runs as); ``durable``
    keeps PostgreSQL's fsync defaults (benchmarks), else they are off (tests)."""
    as_user: dict[str, str] = {}
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody", "nogroup")
        as_user = {"user": "nobody", "group": "nogroup"}
    data = os.path.join(folder, "data")
    pwfile = os.path.join(folder, "pw")
    Path(pwfile).write_text(PASSWORD + "\n")
    if as_user:
        shutil.chown(pwfile, "nobody", "nogroup")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    subprocess.run([_bin("initdb"), "-D", data, "-U", SUPERUSER, "--pwfile", pwfile,
                    "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"],
                   check=True, capture_output=True, env=env, cwd=folder, **as_user)  # type: ignore[call-overload]
    # durable: fsync and synchronous commits on, with a server's usual room for WAL
    # between checkpoints (docs/team-store.md, "Server settings")
    fast = (["-c", "max_wal_size=4GB", "-c", "checkpoint_timeout=30min"] if durable else
            ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
    return subprocess.Popen(
        [_bin("postgres"), "-D", data, "-k", folder, "-c", "listen_addresses=", *fast,
         "-c", "max_connections=60", "-c", "shared_buffers=256MB"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "server.log"), "wb"),
        env=env, cwd=folder, start_new_session=True, **as_user)  # type: ignore[call-overload]


def wait_ready(folder: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = Path(folder, "server.log").read_text(errors="replace")
            pytest.fail(f"PostgreSQL exited with {proc.returncode}:\n{log}")
        ok = subprocess.run([_bin("pg_isready"), "-h", folder, "-q"], check=False)
        if ok.returncode == 0:
            return
        time.sleep(0.1)
    pytest.fail("PostgreSQL did not start in time")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Fast shutdown by PID; a kill if it does not stop."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Server]:
    """One PostgreSQL server for the whole run, with login roles alice, bob and carol."""
    folder = tempfile.mkdtemp(prefix="smllm-pg-")
    os.chmod(folder, 0o755)
    proc = start(folder)
    pgpass = os.path.join(tempfile.mkdtemp(prefix="smllm-pgpass-"), "pgpass")
    Path(pgpass).write_text("".join(f"*:*:*:{u}:{PASSWORD}\n" for u in (SUPERUSER, *ROLES)))
    os.chmod(pgpass, 0o600)
    saved = os.environ.get("PGPASSFILE")
    os.environ["PGPASSFILE"] = pgpass
    try:
        wait_ready(folder, proc)
        server = Server(folder, pgpass, proc.pid)
        with server.connect() as conn:
            for role in ROLES:
                conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        yield server
    finally:
        stop(proc)
        if saved is None:
            os.environ.pop("PGPASSFILE", None)
        else:
            os.environ["PGPASSFILE"] = saved
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(os.path.dirname(pgpass), ignore_errors=True)


_COUNTER = iter(range(1, 1_000_000))


@pytest.fixture
def store_db(postgres: Server) -> Iterator[str]:
    """A fresh, empty database on the test server; dropped afterwards. Yields its name."""
    name = f"t{os.getpid()}_{next(_COUNTER)}"
    with postgres.connect() as conn:
        conn.execute(f"CREATE DATABASE {name}")
        conn.execute(f"GRANT ALL ON DATABASE {name} TO PUBLIC")
    yield name
    with postgres.connect() as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
