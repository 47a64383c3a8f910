#!/usr/bin/env python3
"""The module boundaries ARCHITECTURE.md draws, checked on what the compiler actually includes.

Issue 22: the gate reaches a zone only through the gate<->world link, so no gate source may
include (even through another header) the world's zone, host or character state, or anything of
src/shard; src/shard includes nothing of the gate's; and nothing of src/shard but world_service.cc (the thin
gRPC adapter) includes gRPC: WorldShard, its Play stream logic, the keeper, the drain and the rest
are transport-free (transport_free.h also fails the core's own build).

Usage: check_layering.py <build>/compile_commands.json
Each source named by a rule is preprocessed for its dependencies (-M) with its own compile
command; the test fails naming every source that reaches a forbidden header. A rule that matches
no source fails too, so a renamed file cannot make a rule silently vacuous.
"""
import fnmatch
import json
import os
import shlex
import subprocess
import sys

# (sources and the ones excepted, relative to the repository root; forbidden substrings of an
# included path; why)
RULES = [
    (["src/gate/*.cc"], [],
     ["/telos/world/zone.h", "/telos/world/world_host.h", "/telos/world/character_state.h",
      "/telos/shard/"],
     "the gate reaches a zone only through the world link"),
    (["src/shard/*.cc"], [], ["/telos/gate/"], "the shard does not include the gate"),
    (["src/shard/*.cc"], ["src/shard/world_service.cc"], ["/grpcpp/", ".grpc.pb.h"],
     "the shard is transport-free: gRPC only in world_service.cc"),
]


def dependency_command(entry):
    """The entry's compile command, changed to print its dependencies instead of compiling."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD"):
            continue
        out.append(arg)
    return out + ["-M", "-MG"]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        entries = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    by_source = {}
    for entry in entries:
        path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
        if not path.endswith("_test.cc"):
            by_source.setdefault(path, entry)
    failures = []
    deps_cache = {}
    for patterns, excepted, forbidden, why in RULES:
        sources = sorted(s for s in by_source
                         if any(fnmatch.fnmatch(s, p) for p in patterns) and s not in excepted)
        if not sources:
            failures.append("rule '%s': no source matches %s" % (why, patterns))
            continue
        for source in sources:
            if source not in deps_cache:
                entry = by_source[source]
                run = subprocess.run(dependency_command(entry), cwd=entry["directory"],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    failures.append("%s: cannot list its includes: %s" % (source, run.stderr[-500:]))
                    deps_cache[source] = ""
                    continue
                deps_cache[source] = run.stdout.replace("\\\n", " ")
            hits = sorted({dep for dep in deps_cache[source].split()
                           if any(bad in dep for bad in forbidden)})
            if hits:
                more = " and %d more" % (len(hits) - 3) if len(hits) > 3 else ""
                failures.append("%s includes %s%s (%s)" % (source, ", ".join(hits[:3]), more, why))
    for failure in failures:
        print("layering: " + failure)
    checked = len(deps_cache)
    if failures:
        print("layering: %d problem(s) in %d sources" % (len(failures), checked))
        return 1
    print("layering: %d sources keep to their boundaries" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
