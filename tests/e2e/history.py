"""The write-history checker (issue: zero-drop drain, failover and chaos).

Every character save a zone makes carries (zone, shard, lease epoch), and with
TELOS_RECORD_ZONE_WRITES=1 a world also appends each one to the `zone_writes` table in commit
order. check() proves from that history that no two shards wrote the same zone in overlapping
lease tenures:

  1. one tenure, one writer: every write of (zone, epoch) comes from the same shard;
  2. tenures never overlap: in commit order a zone's epochs never go down, so once a newer
     tenure has written, no older one writes again (a paused or partitioned shard that lost its
     lease is refused by the store's zone fence);
  3. every tenure was granted: the writing shard logged winning that zone at that epoch
     ("claimed zone", "zone adopted from a draining peer" or "lease confirmed again"), when
     the grants are given.

Standard library only."""

import subprocess

GRANT_MESSAGES = ("claimed zone", "lease confirmed again: zone leaves single-shard mode")


class Write:
    def __init__(self, id_, zone, epoch, shard, character):
        self.id, self.zone, self.epoch, self.shard, self.character = (id_, zone, epoch, shard,
                                                                     character)

    def __repr__(self):
        return "#%d %s@%d by %s (%s)" % (self.id, self.zone, self.epoch, self.shard,
                                         self.character)


def read_writes(database_url, schema):
    """The recorded writes of a fleet's schema, in commit order."""
    out = subprocess.run(
        ["psql", database_url, "-tAq", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c",
         "SELECT id, zone_id, lease_epoch, shard_id, name_key FROM %s.zone_writes ORDER BY id"
         % schema], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("cannot read zone_writes: " + out.stderr)
    writes = []
    for line in out.stdout.splitlines():
        if line.strip():
            id_, zone, epoch, shard, character = line.split("\t")
            writes.append(Write(int(id_), zone, int(epoch), shard, character))
    return writes


def grants_from_logs(entries_by_shard):
    """{(zone, epoch): shard} from each world's log entries ({shard: [dict]})."""
    grants = {}
    for shard, entries in entries_by_shard.items():
        for e in entries:
            if e.get("msg") in GRANT_MESSAGES and "zone" in e and "epoch" in e:
                grants[(e["zone"], int(e["epoch"]))] = e.get("shard", shard)
            elif e.get("msg") == "zone adopted from a draining peer" and "epoch" in e:
                grants[(e["zone"], int(e["epoch"]))] = shard
    return grants


def check(writes, grants=None):
    """Returns the list of violations (empty: the history is clean)."""
    violations = []
    writer_of = {}
    newest = {}
    for w in writes:
        first = writer_of.setdefault((w.zone, w.epoch), w.shard)
        if first != w.shard:
            violations.append("%r: tenure %s@%d was also written by %s" %
                              (w, w.zone, w.epoch, first))
        if w.epoch < newest.get(w.zone, (0, None))[0]:
            epoch, by = newest[w.zone]
            violations.append("%r: written after tenure %d (%r) had written" % (w, epoch, by))
        else:
            newest[w.zone] = (w.epoch, w)
        if grants is not None and grants.get((w.zone, w.epoch)) != w.shard:
            violations.append("%r: %s was never granted %s at epoch %d (granted to %s)" %
                              (w, w.shard, w.zone, w.epoch, grants.get((w.zone, w.epoch))))
    return violations
