"""`telos director` and the director's ctl verbs refuse bad settings by name, with exit code 2.

Nothing here needs Redis: each case fails while the settings are read, before any connection.
"""
import os
import subprocess
import unittest

BINARY = os.environ.get("TELOS_BINARY", "build/dev/telos")
REPO = os.environ.get("TELOS_REPO", ".")


def run(args, **settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TELOS_")}
    env["TELOS_CONTENT_DIR"] = os.path.join(REPO, "content")
    env.update(settings)
    return subprocess.run([BINARY, *args], env=env, capture_output=True, text=True, timeout=60)


class DirectorConfigTest(unittest.TestCase):
    def assertRefused(self, args, variable, **settings):
        done = run(args, **settings)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(variable, done.stderr)

    def test_redis_is_required(self):
        self.assertRefused(["director"], "TELOS_REDIS")

    def test_bad_values_name_their_variable(self):
        redis = {"TELOS_REDIS": "redis://127.0.0.1:1"}
        for variable, value in [
            ("TELOS_DIRECTOR_LEASE_TTL_MS", "10"),
            ("TELOS_DIRECTOR_LEASE_TTL_MS", "fifteen"),
            ("TELOS_DIRECTOR_SCOPE", "bad\tscope"),
            ("TELOS_DIRECTOR_MARGIN_PLAYERS", "-1"),
            ("TELOS_DIRECTOR_MOVES_IN_FLIGHT_MAX", "0"),
            ("TELOS_DIRECTOR_ZONE_COOLDOWN_MS", "x"),
            ("TELOS_DIRECTOR_DIRECTIVE_TTL_MS", "5"),
            ("TELOS_DIRECTOR_PLAN_INTERVAL_MS", "0"),
            ("TELOS_ADMIN_PORT", "70000"),
        ]:
            with self.subTest(variable=variable, value=value):
                self.assertRefused(["director"], variable, **redis, **{variable: value})

    def test_ctl_rebalance_needs_dry_run(self):
        self.assertRefused(["ctl", "rebalance"], "--dry-run", TELOS_REDIS="redis://127.0.0.1:1")

    def test_ctl_verbs_read_the_directors_settings(self):
        for verb in (["ctl", "directives"], ["ctl", "rebalance", "--dry-run"]):
            with self.subTest(verb=verb):
                self.assertRefused(verb, "TELOS_REDIS")
                self.assertRefused(verb, "TELOS_DIRECTOR_MARGIN_PLAYERS",
                                   TELOS_REDIS="redis://127.0.0.1:1",
                                   TELOS_DIRECTOR_MARGIN_PLAYERS="many")


class CtlKeepsSecretsTest(unittest.TestCase):
    def test_an_unreachable_directory_is_named_without_its_password(self):
        # Port 1 refuses at once: the read fails after the settings were accepted.
        done = run(["ctl", "cluster"], TELOS_REDIS="redis://:hunter2@127.0.0.1:1")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("127.0.0.1:1", done.stderr)
        self.assertNotIn("hunter2", done.stderr)


if __name__ == "__main__":
    unittest.main()
