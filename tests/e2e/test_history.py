"""Unit tests of the write-history checker (history.py): it must catch each kind of overlap."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from history import Write, check, grants_from_logs  # noqa: E402


def history(*rows):
    return [Write(i + 1, *row) for i, row in enumerate(rows)]


class HistoryCheckerTest(unittest.TestCase):
    def test_a_clean_failover_passes(self):
        writes = history(("town", 1, "w0", "ann"), ("town", 1, "w0", "bob"),
                         ("town", 2, "w1", "ann"), ("forest", 1, "w1", "cid"),
                         ("town", 2, "w1", "bob"))
        self.assertEqual(check(writes), [])

    def test_two_shards_in_one_tenure_is_caught(self):
        writes = history(("town", 3, "w0", "ann"), ("town", 3, "w1", "bob"))
        violations = check(writes)
        self.assertEqual(len(violations), 1)
        self.assertIn("also written by w0", violations[0])

    def test_a_stale_tenure_writing_after_a_newer_one_is_caught(self):
        writes = history(("town", 1, "w0", "ann"), ("town", 2, "w1", "bob"),
                         ("town", 1, "w0", "cid"))
        violations = check(writes)
        self.assertEqual(len(violations), 1)
        self.assertIn("after tenure 2", violations[0])

    def test_zones_are_judged_apart(self):
        writes = history(("town", 5, "w0", "ann"), ("forest", 1, "w1", "bob"))
        self.assertEqual(check(writes), [])

    def test_a_write_without_a_grant_is_caught(self):
        logs = {"w0": [{"msg": "claimed zone", "shard": "w0", "zone": "town", "epoch": 1}],
                "w1": [{"msg": "lease confirmed again: zone leaves single-shard mode",
                        "shard": "w1", "zone": "town", "epoch": 2}]}
        grants = grants_from_logs(logs)
        self.assertEqual(grants, {("town", 1): "w0", ("town", 2): "w1"})
        writes = history(("town", 1, "w0", "ann"), ("town", 2, "w1", "bob"),
                         ("town", 3, "w1", "cid"))
        violations = check(writes, grants)
        self.assertEqual(len(violations), 1)
        self.assertIn("never granted town at epoch 3", violations[0])


if __name__ == "__main__":
    unittest.main()
