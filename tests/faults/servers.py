"""Private server instances for the fault tests: a redis-server and a PostgreSQL cluster of their
own, on free loopback ports in temporary directories, that a test may stop, start and restart.

The shared servers (5432, 6379) are never touched: other processes use them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

from tests.smtp import free_port


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready within {timeout}s")


class PrivateRedis:
    """``redis-server --port P --save '' --dir tmp``; ``stop()`` kills it, ``start()`` brings it
    back on the same port (empty: it keeps nothing on disk, like the production setting)."""

    def __init__(self, tmp: Path):
        self.dir = Path(tmp)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False

    def start(self) -> PrivateRedis:
        self.proc = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(self.dir), "--logfile", str(self.dir / "redis.log"),
            ],
        )  # fmt: skip
        _wait(self.ping, 10, "private redis-server")
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        _wait(lambda: not self.ping(), 5, "redis-server stopped")


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    if found:
        return Path(found[0]).parent
    pg_ctl = shutil.which("pg_ctl")
    if pg_ctl is None:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    return Path(pg_ctl).parent


class PrivatePostgres:
    """A throwaway cluster: ``initdb`` into a temp dir, ``pg_ctl start`` on a free port.

    initdb refuses to run as root; as root the cluster belongs to the ``postgres`` system user
    (present wherever the PostgreSQL server package is installed) and its commands run through
    ``runuser``. Trust auth on loopback, fsync off (a test cluster, not a durability claim:
    ``pg_ctl restart -m fast`` is a clean shutdown either way).
    """

    def __init__(self, tmp: Path):
        self.dir = Path(tmp) / "pg"
        self.data = self.dir / "data"
        self.port = free_port()
        self.bin = _pg_bin()
        self.user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name

    def url(self, db: str = "postgres") -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{db}"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout)

    def init(self) -> PrivatePostgres:
        self.dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (self.dir.parent, self.dir):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", self.user, "--no-sync", "-E", "UTF8")
        return self

    def _options(self) -> str:
        return (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
        )

    def start(self) -> PrivatePostgres:
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-o", self._options(), "-w", "start"
        )
        return self

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is disconnected, open transactions roll back."""
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.dir / "log"), "-o", self._options(),
            "-m", "fast", "-w", "restart",
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)

    def sql(self, statement: str, db: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(db), autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []


class PrivateStandby(PrivatePostgres):
    """A streaming-replication standby of a ``PrivatePostgres``: ``pg_basebackup -R`` of the
    primary into its own temp dir, started on its own free port as a hot standby."""

    def __init__(self, tmp: Path, primary: PrivatePostgres):
        super().__init__(Path(tmp) / "standby")
        self.primary = primary

    def init(self) -> PrivateStandby:
        self.dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (self.dir.parent, self.dir):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        self._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", self.primary.user,
            "-D", str(self.data), "-R", "-X", "stream", "--checkpoint=fast", "--no-sync", timeout=120,
        )  # fmt: skip
        return self

    def _options(self) -> str:
        return f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c hot_standby=on -c fsync=off"

    def pause_replay(self) -> None:
        self.sql("SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        self.sql("SELECT pg_wal_replay_resume()")
