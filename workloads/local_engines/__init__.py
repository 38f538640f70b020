"""Local server engines Tickbench can start on this computer, loopback only, for trying an engine
and for the tests: QuestDB, PostgreSQL, Apache Druid, and (tests only) a MongoDB wire-protocol
stand-in. ``base`` has what every launcher shares; one module per engine."""
