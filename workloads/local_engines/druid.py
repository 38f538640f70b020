"""A local Apache Druid for Tickbench: five JVMs on loopback ports; 33.0.0 unless asked for 27.0.0.

``start(home)`` fetches Druid's jars once with Maven (``mvn dependency:copy-dependencies`` of
``druid-services`` 33.0.0, runtime scope, ``org.hyperic:sigar`` excluded: its repository is
unreachable; 207 jars, ~183 MB) into ``<engine cache>/druid-33.0.0/lib``, writes the configuration
under ``home/druid/conf`` with free 127.0.0.1 ports (every ``druid.host``, ``druid.plaintextPort``,
ZooKeeper and Derby address is loopback), then starts, in order: ZooKeeper, the coordinator (also
the overlord; it hosts the Derby metadata store), then the historical, the indexer and the broker.
It waits until the broker answers SQL and returns the target config (``port`` = the broker,
``coordinator_port`` = the coordinator/overlord, ``data_folder`` = where ingestion input files go).

Settings as report 001 ran Druid: broker and historical caches off. Tasks reach the indexer over
HTTP (``httpRemote``): the ZooKeeper task runner refuses a task spec over 512 KiB, which a 25,000-row
append with its rows inline exceeds. Each Druid JVM: -Xmx512m,
400 MB direct memory, serial GC: ~2.9 GB resident in all, ~20 s to start on 2 cores.

Multi-stage queries (MSQ: ``INSERT ... SELECT``, report 003's map-reduce): the launcher loads the
``druid-multi-stage-query`` extension when Maven can fetch its jar
(``org.apache.druid.extensions:druid-multi-stage-query:<version>``, into
``<engine cache>/druid-<version>/extensions/druid-multi-stage-query``), and then gives the indexer
two task slots (an MSQ controller and its worker). Where the fetch fails the reason is kept in
``<engine cache>/druid-<version>/msq-unavailable.txt`` (tried again after a day) and Druid starts
without it: the target asks the server (``/status``) and answers "this server has no
multi-stage-query extension". The package registry reachable here serves that extension for
27.0.0 but answers "Could not find artifact" for every version from 28 to 33, so the default
33.0.0 runs without it, and ``start(home, version=MSQ_VERSION)`` starts Druid 27.0.0 with it:
the same five JVMs and configuration, in ``<engine cache>/druid-27.0.0``. For 27 the registry also
lacks ``druid-indexing-hadoop`` 27.0.0 (Hadoop batch ingestion, never used here); Druid's command
line lists the Hadoop indexer, whose classes must load for any server to start (without them:
``NoClassDefFoundError: org/apache/druid/indexer/path/UsedSegmentsRetriever``), so that one jar
of 28.0.0 stands in (without its dependencies). 27 is told to keep SQL nulls
(``useDefaultValueForNull=false``), as 33 always does, and is not given 33's
``centralizedDatasourceSchema`` setting, which it lacks. ``start(home, msq=False)`` never loads MSQ.

No authentication: Druid's ``druid-basic-security`` extension is not served by the package
registry reachable here, so the local engine answers without a password (loopback only).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from workloads.local_engines.base import (LOOPBACK, EngineStartError, LocalEngine, Progress, cache_dir, free_port,
                                          java, port_open, spawn, stop_pids, wait_until)

KIND = "druid"
VERSION = "33.0.0"              # the default
MSQ_VERSION = "27.0.0"          # the newest whose multi-stage-query extension the registry here serves
LABEL = f"Apache Druid {VERSION}"
NOTE = ("heavy: ~183 MB of jars from Maven (once; the first fetch may take minutes), five JVMs "
        "(ZooKeeper, coordinator+overlord, historical, indexer, broker), ~20 s to start, ~3 GB resident")
START_DEADLINE_S = 240.0
SERVICES = ("coordinator", "historical", "indexer", "broker")
MSQ = "druid-multi-stage-query"
MSQ_RETRY_S = 86_400.0          # a failed fetch is tried again after a day


@dataclass(frozen=True)
class Release:
    """What a Druid version needs beyond the recipe written for 33.0.0."""
    version: str
    stand_ins: tuple[tuple[str, str, str], ...] = ()     # (group, artifact, version) for a jar not served
    lacks: tuple[str, ...] = ()                           # properties of 33's configuration it does not have
    common: str = ""                                      # more common.runtime.properties


RELEASES = {
    VERSION: Release(VERSION),
    MSQ_VERSION: Release(MSQ_VERSION, stand_ins=(("org.apache.druid", "druid-indexing-hadoop", "28.0.0"),),
                         lacks=("druid.centralizedDatasourceSchema.enabled",),
                         common="druid.generic.useDefaultValueForNull=false\n"),
}


def release(version: str) -> Release:
    if version not in RELEASES:
        raise EngineStartError(f"Tickbench's launcher starts Druid {' or '.join(RELEASES)}, not {version}")
    return RELEASES[version]


def msq_coordinates(version: str = VERSION) -> str:
    return f"org.apache.druid.extensions:{MSQ}:{version}"


def pom(version: str = VERSION) -> str:
    """The Maven project whose runtime dependencies are Druid's jars: ``druid-services`` without
    sigar (its repository is unreachable), each stand-in as its own jar alone."""
    stand_ins = release(version).stand_ins
    excluded = "".join(f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"
                       for g, a in [("org.hyperic", "sigar"), *((g, a) for g, a, _ in stand_ins)])
    alone = "".join(f"""
    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>""" for g, a, v in stand_ins)
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>tickbench.engines</groupId><artifactId>druid</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.druid</groupId><artifactId>druid-services</artifactId><version>{version}</version>
      <exclusions>{excluded}</exclusions>
    </dependency>{alone}
  </dependencies>
</project>
"""


JVM_FLAGS = (
    "-Xms512m", "-Xmx512m", "-XX:MaxDirectMemorySize=400m", "-XX:+UseSerialGC", "-Duser.timezone=UTC",
    "-Dfile.encoding=UTF-8",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED", "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
)

COMMON = """druid.host={host}
druid.bindOnHost=true
druid.extensions.directory={extensions_dir}
druid.extensions.hadoopDependenciesDir={home}/hadoop-deps
druid.extensions.loadList={extensions}
druid.startup.logging.logProperties=false
druid.zk.service.host={host}:{zk}
druid.zk.paths.base=/druid
druid.metadata.storage.type=derby
druid.metadata.storage.connector.connectURI=jdbc:derby://{host}:{derby}/{home}/var/druid/metadata.db;create=true
druid.metadata.storage.connector.host={host}
druid.metadata.storage.connector.port={derby}
druid.storage.type=local
druid.storage.storageDirectory={home}/var/druid/segments
druid.indexer.logs.type=file
druid.indexer.logs.directory={home}/var/druid/indexing-logs
druid.selectors.indexing.serviceName=druid/overlord
druid.selectors.coordinator.serviceName=druid/coordinator
druid.monitoring.monitors=[]
druid.emitter=noop
druid.indexing.doubleStorage=double
druid.server.hiddenProperties=["druid.metadata.storage.connector.password"]
druid.sql.enable=true
druid.lookup.enableLookupSyncOnStartup=false
druid.expressions.useStrictBooleans=true
druid.global.http.eagerInitialization=false
"""

SERVICE_CONF = {
    "coordinator": """druid.service=druid/coordinator
druid.plaintextPort={port}
druid.coordinator.startDelay=PT5S
druid.coordinator.period=PT5S
druid.manager.segments.pollDuration=PT5S
druid.coordinator.asOverlord.enabled=true
druid.coordinator.asOverlord.overlordService=druid/overlord
druid.indexer.queue.startDelay=PT2S
druid.indexer.storage.type=metadata
druid.indexer.runner.type=httpRemote
druid.centralizedDatasourceSchema.enabled=false
""",
    "historical": """druid.service=druid/historical
druid.plaintextPort={port}
druid.server.http.numThreads=8
druid.processing.buffer.sizeBytes=64MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=2
druid.processing.tmpDir={home}/var/druid/processing
druid.segmentCache.locations=[{{"path":"{home}/var/druid/segment-cache","maxSize":"10g"}}]
druid.server.maxSize=10g
druid.historical.cache.useCache=false
druid.historical.cache.populateCache=false
""",
    "indexer": """druid.service=druid/indexer
druid.plaintextPort={port}
druid.worker.capacity={capacity}
druid.indexer.task.baseTaskDir={home}/var/druid/task
druid.server.http.numThreads=8
druid.processing.buffer.sizeBytes=64MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=1
druid.processing.tmpDir={home}/var/druid/processing
""",
    "broker": """druid.service=druid/broker
druid.plaintextPort={port}
druid.server.http.numThreads=8
druid.broker.http.numConnections=5
druid.broker.http.maxQueuedBytes=10MiB
druid.processing.buffer.sizeBytes=64MiB
druid.processing.numMergeBuffers=2
druid.processing.numThreads=1
druid.processing.tmpDir={home}/var/druid/processing
druid.broker.cache.useCache=false
druid.broker.cache.populateCache=false
""",
}

LOG4J = """<?xml version="1.0" encoding="UTF-8" ?>
<Configuration status="WARN">
  <Appenders><Console name="Console" target="SYSTEM_OUT"><PatternLayout pattern="%d{ISO8601} %p [%t] %c - %m%n"/></Console></Appenders>
  <Loggers><Root level="warn"><AppenderRef ref="Console"/></Root></Loggers>
</Configuration>
"""


def druid_lib(progress: Progress | None = None, version: str = VERSION) -> Path:
    """Druid's jars, fetched once into ``<engine cache>/druid-<version>/lib`` (progress every few s)."""
    root = cache_dir() / f"druid-{version}"
    lib = root / "lib"
    if lib.is_dir() and any(lib.glob("druid-server-*.jar")):
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EngineStartError(f"Maven (mvn) is needed to download Druid {version}'s jars: install maven")
    root.mkdir(parents=True, exist_ok=True)
    (root / "pom.xml").write_text(pom(version))
    partial = root / "lib.partial"
    if progress:
        progress(f"downloading Druid {version}'s jars with Maven (~130-180 MB, once; may take minutes)…")
    log = root / "fetch.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([mvn, "-q", "-B", "dependency:copy-dependencies", "-DincludeScope=runtime",
                                 f"-DoutputDirectory={partial}"], cwd=root, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    last = 0.0
    while proc.poll() is None:
        time.sleep(0.5)
        if progress and time.monotonic() - last > 5:
            last = time.monotonic()
            count = len(list(partial.glob("*.jar"))) if partial.is_dir() else 0
            progress(f"downloading Druid's jars: {count} of ~200 copied")
    if proc.returncode != 0 or not any(partial.glob("druid-server-*.jar")):
        tail = log.read_text(errors="replace")[-1500:]
        raise EngineStartError(f"Maven could not fetch Druid {version}'s jars: {tail}")
    if lib.exists():
        shutil.rmtree(lib)
    partial.rename(lib)
    return lib


def msq_extension(progress: Progress | None = None, version: str = VERSION) -> tuple[Path | None, str]:
    """The extensions folder holding the multi-stage-query extension (its jar fetched once by
    Maven), or None and why it cannot be had (a failed fetch is remembered for a day)."""
    root = cache_dir() / f"druid-{version}"
    extensions = root / "extensions"
    if any((extensions / MSQ).glob("*.jar")):
        return extensions, ""
    marker = root / "msq-unavailable.txt"
    if marker.is_file() and time.time() - marker.stat().st_mtime < MSQ_RETRY_S:
        return None, marker.read_text().strip()
    mvn = shutil.which("mvn")
    if mvn is None:
        return None, "Maven (mvn) is needed to fetch the multi-stage-query extension"
    coordinates = msq_coordinates(version)
    if progress:
        progress(f"downloading {coordinates} with Maven…")
    folder = extensions / MSQ
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([mvn, "-q", "-B", "-U", "dependency:copy", f"-Dartifact={coordinates}",
                           f"-DoutputDirectory={folder}"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not any(folder.glob("*.jar")):
        text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)          # Maven's colours
        said = re.search(r"Could not (?:find|transfer|resolve)[^\n]*", text) or re.search(r"\[ERROR\] ([^\n]+)", text)
        reason = f"Maven could not fetch {coordinates}: " + (said.group(0) if said else text.strip()[-300:] or
                                                             f"mvn exited with {done.returncode}")
        marker.write_text(reason.strip() + "\n")
        return None, reason.strip()
    return extensions, ""


def _properties(text: str, lacks: tuple[str, ...]) -> str:
    """``text`` without the lines setting a property of ``lacks``."""
    return "".join(line for line in text.splitlines(keepends=True) if line.split("=", 1)[0] not in lacks)


def _write_conf(home: Path, ports: dict[str, int], extensions: Path | None = None, version: str = VERSION) -> Path:
    """The configuration; ``extensions``: a folder holding the MSQ extension, loaded when given."""
    wanted = release(version)
    conf = home / "conf"
    common = conf / "_common"
    common.mkdir(parents=True, exist_ok=True)
    (home / "extensions").mkdir(exist_ok=True)
    (home / "hadoop-deps").mkdir(exist_ok=True)
    text = COMMON.format(host=LOOPBACK, home=home, extensions=json.dumps([MSQ] if extensions else []),
                         extensions_dir=extensions or home / "extensions", zk=ports["zookeeper"], derby=ports["derby"])
    (common / "common.runtime.properties").write_text(_properties(text, wanted.lacks) + wanted.common)
    (common / "log4j2.xml").write_text(LOG4J)
    for service in SERVICES:
        (conf / service).mkdir(exist_ok=True)
        properties = _properties(SERVICE_CONF[service], wanted.lacks)
        (conf / service / "runtime.properties").write_text(properties.format(
            port=ports[service], home=home, capacity=2 if extensions else 1))
    return conf


def _ready(port: int, path: str = "/status/health") -> bool:
    request = urllib.request.Request(f"http://{LOOPBACK}:{port}{path}")
    with urllib.request.urlopen(request, timeout=2) as reply:
        return reply.status == 200 and reply.read().strip() == b"true"


def _sql_ready(port: int) -> bool:
    request = urllib.request.Request(f"http://{LOOPBACK}:{port}/druid/v2/sql", method="POST",
                                     data=json.dumps({"query": "SELECT 1 AS x"}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        return reply.status == 200


def start(home: Path, progress: Progress | None = None, msq: bool = True, version: str = VERSION) -> LocalEngine:
    """Druid ``version`` (a key of ``RELEASES``) on loopback; ``msq``: load the multi-stage-query
    extension when it can be fetched."""
    release(version)
    folder = (Path(home) / KIND).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    lib = druid_lib(progress, version)
    extensions, why = msq_extension(progress, version) if msq else (None, "not asked for")
    if msq and extensions is None and progress:
        progress(f"Druid starts without multi-stage queries: {why}")
    ports = {"zookeeper": free_port(), "derby": free_port(), **{s: free_port() for s in SERVICES}}
    conf = _write_conf(folder, ports, extensions, version)
    data = folder / "input"
    data.mkdir(exist_ok=True)
    (folder / "var" / "zk").mkdir(parents=True, exist_ok=True)
    exe = java()
    procs: list[subprocess.Popen] = []
    logs = folder / "logs"
    try:
        if progress:
            progress(f"starting ZooKeeper for Druid {version}…")
        log = logs / "zookeeper.log"
        zk_conf = folder / "zoo.cfg"
        zk_conf.write_text(f"dataDir={folder / 'var' / 'zk'}\nclientPort={ports['zookeeper']}\n"
                           f"clientPortAddress={LOOPBACK}\nadmin.enableServer=false\ntickTime=2000\n")
        procs.append(spawn([exe, "-Xmx128m", "-XX:+UseSerialGC", f"-Dlog4j.configurationFile={conf}/_common/log4j2.xml",
                            "-cp", f"{lib}/*", "org.apache.zookeeper.server.ZooKeeperServerMain", str(zk_conf)],
                           log, cwd=folder))
        wait_until(lambda: port_open(ports["zookeeper"]), 60, "Druid's ZooKeeper", procs, log)
        for index, service in enumerate(SERVICES):
            if progress:
                progress(f"starting Druid {service} ({index + 2} of 5 processes)…")
            log = logs / f"{service}.log"
            procs.append(spawn([exe, *JVM_FLAGS, f"-Ddruid.node.type={service}",
                                f"-Dlog4j.configurationFile={conf}/_common/log4j2.xml",
                                "-cp", f"{conf}/_common:{conf}/{service}:{lib}/*",
                                "org.apache.druid.cli.Main", "server", service], log, cwd=folder))
            if service == "coordinator":     # the metadata store and the overlord come first
                wait_until(lambda: _ready(ports["coordinator"]), START_DEADLINE_S, "Druid coordinator",
                           procs, log)
        for service in SERVICES[1:]:
            wait_until(lambda: _ready(ports[service]), START_DEADLINE_S, f"Druid {service}", procs,
                       logs / f"{service}.log")
        wait_until(lambda: _sql_ready(ports["broker"]), START_DEADLINE_S, "Druid broker's SQL", procs,
                   logs / "broker.log")
    except BaseException:
        stop_pids([p.pid for p in procs])
        raise
    config = {"host": LOOPBACK, "port": ports["broker"], "coordinator_port": ports["coordinator"],
              "data_folder": str(data), "local_engine": True,
              "segment_cache": str(folder / "var" / "druid" / "segment-cache")}
    return LocalEngine(kind=KIND, pids=[p.pid for p in procs], config=config, folder=str(folder), ports=ports)
