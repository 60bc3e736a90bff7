#!/usr/bin/env python3
"""Tests of bench/paired.py on made-up builds: scripts that print a fixed `N ns/event` the way
the `profile` example does. What is checked: each build's figure and the change against the
first, the copy that `--copy` adds (timed from its own file beside the first build), the same
build given twice, a bare file name, the untimed first run of each build and its file dropped
from the page cache, and clear refusals. Run: python3 -m unittest discover -s
bench -p 'test_*.py'
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def fake_build(d, name, ns):
    """A 'profile' binary that prints `ns` ns/event and, if asked, logs its own path."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\n[ -n \"$PAIRED_LOG\" ] && echo \"$0\" >> \"$PAIRED_LOG\"\n"
                f"echo \"x: 1s wall, {ns} ns/event\"\n")
    os.chmod(path, 0o755)
    return path


def paired(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, os.path.join(HERE, "paired.py"), *args],
                          capture_output=True, text=True, cwd=cwd, env=env)


class PairedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.scenario = os.path.join(self.d, "s.toml")
        open(self.scenario, "w").close()

    def tearDown(self):
        self.tmp.cleanup()

    def test_change_against_the_first(self):
        a = fake_build(self.d, "a", 200)
        b = fake_build(self.d, "b", 150)
        r = paired(a, b, self.scenario, "--rounds", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{a}: median 200 ns/event", r.stdout)
        self.assertIn(f"{b} against {a}: median change -25.0 %, lower in 3 of 3 rounds", r.stdout)

    def test_copy_is_timed_from_its_own_file_beside_the_first(self):
        a = fake_build(self.d, "a", 200)
        log = os.path.join(self.d, "log")
        r = paired(a, self.scenario, "--rounds", "2", "--copy",
                   env={**os.environ, "PAIRED_LOG": log})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{a} (a copy) against {a}: median change +0.0 %, lower in 0 of 2 rounds",
                      r.stdout)
        with open(log) as f:
            ran = f.read().split()
        # each build once untimed (reading its file in), then once per round
        self.assertEqual(ran.count(a), 3)
        copies = [p for p in ran if p != a]
        self.assertEqual(len(copies), 3)
        self.assertEqual(len(set(copies)), 1)
        self.assertEqual(os.path.dirname(os.path.dirname(copies[0])), self.d)
        self.assertFalse(os.path.exists(copies[0]), "the copy is removed afterwards")

    def test_the_same_build_twice_is_two_builds(self):
        a = fake_build(self.d, "a", 200)
        r = paired(a, a, self.scenario, "--rounds", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{a} against {a}: median change +0.0 %, lower in 0 of 3 rounds", r.stdout)
        self.assertEqual(r.stdout.count("median 200 ns/event (min 200, max 200): [200, 200, 200]"),
                         2)

    def test_a_bare_name_is_the_file_here_not_one_on_path(self):
        fake_build(self.d, "a", 200)
        fake_build(self.d, "b", 100)
        r = paired("a", "b", "s.toml", "--rounds", "1", cwd=self.d,
                   env={**os.environ, "PATH": "/usr/bin:/bin"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("b against a: median change -50.0 %", r.stdout)

    def test_each_build_runs_once_untimed_first(self):
        a = fake_build(self.d, "a", 200)
        b = fake_build(self.d, "b", 100)
        log = os.path.join(self.d, "log")
        r = paired(a, b, a, self.scenario, "--rounds", "2", env={**os.environ, "PAIRED_LOG": log})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            ran = f.read().split()
        # the warm-up runs come first, one per file (a is given twice), then the rounds
        self.assertEqual(ran[:2], [a, b])
        self.assertEqual((ran.count(a), ran.count(b)), (5, 3))

    @unittest.skipUnless(shutil.which("fincore"), "needs util-linux's fincore")
    def test_reread_from_disk_empties_the_files_cache(self):
        path = os.path.join(self.d, "blob")
        with open(path, "wb") as f:
            f.write(os.urandom(1 << 20))
        fs = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
        if fs.stdout.strip() == "tmpfs":
            self.skipTest("a tmpfs file lives in the page cache")

        def resident_pages():
            out = subprocess.run(["fincore", "--noheadings", "--raw", "--output", "PAGES", path],
                                 capture_output=True, text=True, check=True).stdout
            return int(out.split()[0])

        self.assertGreater(resident_pages(), 0)
        sys.path.insert(0, HERE)
        try:
            import paired as tool
        finally:
            sys.path.remove(HERE)
        tool.reread_from_disk(path)
        self.assertEqual(resident_pages(), 0)

    def test_refusals(self):
        a = fake_build(self.d, "a", 200)
        r = paired(a, self.scenario)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("give at least two builds (or one with --copy)", r.stderr)
        r = paired(a, os.path.join(self.d, "missing"), self.scenario)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("missing: not an executable file", r.stderr)
        r = paired(a, a, self.scenario, "--rounds", "0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--rounds must be at least 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
