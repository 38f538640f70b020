"""A MongoDB wire-protocol stand-in for the tests: ``mongo-java-server`` (an independent Java
implementation of MongoDB's wire protocol, in-memory backend), NOT MongoDB.

No real ``mongod`` can be had on these machines (not in Debian; the PyPI packages that fetch one
at run time fail offline), so the ``mongodb`` target's tests run against this stand-in. Its
timings are not MongoDB's and must never be presented as such: the target's ``describe()`` and
every operation's ``extra`` name the server when it is this stand-in. This module is for the test
fixture only; Tickbench does not offer it as a local engine to users.

Install: Maven fetches ``de.bwaldvogel:mongo-java-server`` 1.47.0 and its dependencies once
(``mvn dependency:copy-dependencies`` of the POM below) into
``<engine cache>/mongo-java-server/lib``. Start: ``java -cp 'lib/*' Launcher.java PORT memory``,
the launcher (below, written beside the jars) binding 127.0.0.1 only. ~1.5 s to answer; memory
grows by GBs per million documents, so keep scales small. pymongo 4.18+ refuses this server (its
wire version is too old): the tests use pymongo 4.17.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from workloads.local_engines.base import (LOOPBACK, EngineStartError, LocalEngine, Progress, cache_dir,
                                          free_port, java, port_open, spawn, wait_until)

KIND = "mongodb"
LABEL = "MongoDB wire-protocol stand-in (mongo-java-server; tests only, not MongoDB)"
NOTE = ("mongo-java-server, a wire-protocol stand-in for the tests, NOT MongoDB: its timings are not "
        "MongoDB's. In-memory: GBs of RAM per million documents; ~1.5 s to start (Maven fetches ~10 MB "
        "of jars once).")
VERSION = "1.47.0"
START_DEADLINE_S = 60.0

POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>tickbench.engines</groupId><artifactId>mjs</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>de.bwaldvogel</groupId><artifactId>mongo-java-server</artifactId><version>{VERSION}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>2.0.16</version></dependency>
  </dependencies>
</project>
"""

# Binds the loopback interface only; the memory backend (nothing on disk)
LAUNCHER = """import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
public class Launcher {
  public static void main(String[] a) throws Exception {
    int port = Integer.parseInt(a[0]);
    MongoServer s = new MongoServer(new MemoryBackend());
    s.bind("127.0.0.1", port);
    System.out.println("READY " + s.getLocalAddress());
    Runtime.getRuntime().addShutdownHook(new Thread(s::shutdownNow));
    Thread.currentThread().join();
  }
}
"""


def install(progress: Progress | None = None) -> Path:
    """The folder holding ``lib/`` (the jars) and ``Launcher.java``; Maven fetches the jars once."""
    home = cache_dir() / "mongo-java-server"
    lib = home / "lib"
    home.mkdir(parents=True, exist_ok=True)
    (home / "Launcher.java").write_text(LAUNCHER)
    if not (lib / f"mongo-java-server-core-{VERSION}.jar").is_file():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise EngineStartError("Maven (mvn) is needed to download mongo-java-server: install maven")
        if progress:
            progress(f"downloading mongo-java-server {VERSION} with Maven…")
        (home / "pom.xml").write_text(POM)
        done = subprocess.run([mvn, "-q", "-f", str(home / "pom.xml"), "dependency:copy-dependencies",
                               f"-DoutputDirectory={lib}"], capture_output=True, text=True)
        if done.returncode != 0 or not (lib / f"mongo-java-server-core-{VERSION}.jar").is_file():
            raise EngineStartError(f"Maven could not fetch mongo-java-server: {(done.stdout + done.stderr)[-1500:]}")
    return home


def start(home: Path, progress: Progress | None = None) -> LocalEngine:
    """The stand-in on a free loopback port, data in memory (logs under ``home/mongodb``)."""
    folder = Path(home) / KIND
    folder.mkdir(parents=True, exist_ok=True)
    engine_home = install(progress)
    port = free_port()
    log = folder / "server.log"
    if progress:
        progress(f"starting mongo-java-server on {LOOPBACK}:{port}…")
    proc = spawn([java(), "-Xmx2g", "-cp", str(engine_home / "lib" / "*"), str(engine_home / "Launcher.java"),
                  str(port)], log, cwd=engine_home)
    try:
        wait_until(lambda: port_open(port), START_DEADLINE_S, "mongo-java-server", [proc], log)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return LocalEngine(kind=KIND, pids=[proc.pid], folder=str(folder), ports={"port": port},
                       config={"host": LOOPBACK, "port": port, "database": "tickbench", "local_engine": True})
