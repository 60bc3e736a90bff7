#!/usr/bin/env python3
"""Tests of the vs-ns3 harness's bookkeeping (bench/vs_ns3_record.py, bench/vs_ns3_report.py)
on made-up runs: what a record takes from each simulator's output, that every simulator's
figure is its best of N, that the ratios divide the right spans, that the ratios within rounds
pair each run with its own round's, that the machine is named, and that the goal verdict
follows the wall-time ratio. Run: python3 -m unittest discover -s bench -p 'test_*.py'
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def record(sim, workload, run, times, d):
    out = subprocess.run([sys.executable, f"{HERE}/vs_ns3_record.py", sim, workload, str(run),
                          times, d], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class RecordTest(unittest.TestCase):
    def test_thinlab_sums_runs_and_flows(self):
        with tempfile.TemporaryDirectory() as d:
            flow = lambda name, b, rto: {"name": name, "metrics": {
                "data_packets_sent": 10, "bytes_delivered": b, "retransmissions": 2,
                "rto_events": rto, "goodput_bps": 1e6}}
            write(f"{d}/out/summary.json", json.dumps({"runs": [{
                "events_processed": 500, "dropped_queue": 7, "dropped_loss": 1,
                "flows": [flow("cbr0", 100, 1), flow("bulk0", 300, 2)]}]}))
            write(f"{d}/out/timing.json", json.dumps({"sim_wall_s": 0.25}))
            r = record("thinlab", "dumbbell", 2, "0.5 0.4", d)
        self.assertEqual((r["process_wall_s"], r["process_cpu_s"], r["sim_wall_s"]),
                         (0.5, 0.4, 0.25))
        self.assertEqual((r["events"], r["queue_drops"], r["loss_drops"]), (500, 7, 1))
        self.assertEqual((r["data_segments_sent"], r["bytes_delivered"]), (20, 400))
        self.assertEqual((r["retransmissions"], r["rto_events"]), (4, 3))
        self.assertEqual((r["goodput_mbps"], r["cbr_goodput_mbps"], r["bulk_goodput_mbps"]),
                         (2.0, 1.0, 1.0))

    def test_ns3_takes_its_last_json_line(self):
        with tempfile.TemporaryDirectory() as d:
            line = {"wall_s": 9.0, "cpu_s": 8.5, "events": 4, "packets": 3, "bytes_received": 11,
                    "bottleneck_queue_drops": 2, "data_segments_sent": 5,
                    "retransmissions": 6, "rto_events": 7, "total_goodput_mbps": 1.5}
            write(f"{d}/stdout.txt", "warning: noise\n{\"wall_s\": 1}\n" + json.dumps(line) + "\n")
            r = record("ns-3", "dumbbell", 1, "20 18", d)
        self.assertEqual((r["sim_wall_s"], r["sim_cpu_s"], r["process_cpu_s"]), (9.0, 8.5, 18.0))
        self.assertEqual((r["packet_hops"], r["queue_drops"], r["rto_events"]), (3, 2, 7))
        self.assertEqual(r["bytes_delivered"], 11)

    def test_htsim_reports_fast_recoveries_not_retransmissions(self):
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/stdout.txt", "")
            write(f"{d}/stderr.txt", json.dumps({"wall_s": 0.2, "cpu_s": 0.1,
                                                 "fast_recoveries": 9, "rto_events": 3}) + "\n")
            r = record("htsim", "dumbbell", 1, "0.3 0.2", d)
        self.assertEqual((r["fast_recoveries"], r["rto_events"]), (9, 3))
        self.assertNotIn("retransmissions", r)

    def test_missing_json_line_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/stdout.txt", "Traceback: ns-3 crashed\n")
            p = subprocess.run([sys.executable, f"{HERE}/vs_ns3_record.py", "ns-3", "dumbbell",
                                "1", "1 1", d], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no JSON line", p.stderr)


class ReportTest(unittest.TestCase):
    def report(self, recs, goal=100, build=None, ns3_build=None, env=None):
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/runs.jsonl", "".join(json.dumps(r) + "\n" for r in recs))
            args = [sys.executable, f"{HERE}/vs_ns3_report.py", d, str(goal),
                    "load average: 1.00"] + ([build] if build else [])
            args += [ns3_build] if ns3_build else []
            out = subprocess.run(args, capture_output=True, text=True, check=True,
                                 env={**os.environ, **(env or {})}).stdout
            with open(f"{d}/vs-ns3.json") as f:
                return out, json.load(f)

    def test_the_machine_is_named(self):
        recs = [{"sim": "thinlab", "workload": "dumbbell", "run": 1, "process_wall_s": 0.2,
                 "process_cpu_s": 0.2, "sim_wall_s": 0.15}]
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                  "model\t\t: 1\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\ncpu family\t: 99\n")
            for i, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "32K"),
                                                     (2, "Unified", "512K"),
                                                     (3, "Unified", "32768K")]):
                write(f"{d}/cache/index{i}/level", f"{level}\n")
                write(f"{d}/cache/index{i}/type", f"{kind}\n")
                write(f"{d}/cache/index{i}/size", f"{size}\n")
            out, res = self.report(recs, env={"VS_NS3_CPUINFO": f"{d}/cpuinfo",
                                              "VS_NS3_CACHES": f"{d}/cache"})
        h = res["host"]
        self.assertEqual((h["cpu"], h["cpu_family"], h["cpu_model"]), ("AMD EPYC", "25", "1"))
        self.assertEqual(h["caches"], {"L1d": "32K", "L1i": "32K", "L2": "512K", "L3": "32768K"})
        self.assertIn("AMD EPYC (family 25, model 1); L1d 32K, L1i 32K, L2 512K, L3 32768K", out)

    def test_ratios_within_rounds(self):
        """Each round's ns-3 run is divided by the same round's thinlab run; the best-of-N
        ratio divides the bests, which may come from different rounds."""
        tl = lambda i, w, s: {"sim": "thinlab", "workload": "dumbbell", "run": i,
                              "process_wall_s": w, "process_cpu_s": w, "sim_wall_s": s}
        ns = lambda i, w: {"sim": "ns-3", "workload": "dumbbell", "run": i,
                           "process_wall_s": 30, "process_cpu_s": 25, "sim_wall_s": w,
                           "sim_cpu_s": w}
        # a slow second round for both: the per-round ratios stay 100, 100, 80
        recs = [tl(1, 0.2, 0.1), ns(1, 20.0), tl(2, 0.4, 0.2), ns(2, 40.0),
                tl(3, 0.25, 0.125), ns(3, 20.0)]
        out, res = self.report(recs)
        w = res["workloads"]["dumbbell"]
        self.assertAlmostEqual(w["ratio_ns3_over_thinlab_process_wall"], 100.0)
        rr = w["ratio_ns3_over_thinlab_process_wall_rounds"]
        self.assertEqual(rr["rounds"], 3)
        self.assertAlmostEqual(rr["median"], 100.0)
        self.assertAlmostEqual(rr["min"], 80.0)
        self.assertAlmostEqual(rr["max"], 100.0)
        rs = w["ratio_ns3_over_thinlab_sim_rounds"]
        self.assertAlmostEqual(rs["median"], 200.0)
        self.assertIn("median  100.0x, range 80.00-100.00x (3 rounds)", out)
        # rounds without their thinlab run (the second, a fourth) are left out
        out, res = self.report(recs[:2] + recs[3:] + [ns(4, 1.0)])
        rr = res["workloads"]["dumbbell"]["ratio_ns3_over_thinlab_process_wall_rounds"]
        self.assertEqual(rr["rounds"], 2)
        self.assertAlmostEqual(rr["median"], 90.0)

    def test_the_timed_build_is_named(self):
        recs = [{"sim": "thinlab", "workload": "dumbbell", "run": 1, "process_wall_s": 0.2,
                 "process_cpu_s": 0.2, "sim_wall_s": 0.15}]
        out, res = self.report(recs)
        self.assertEqual(res["thinlab_build"], "release")
        self.assertIn("thinlab build: release", out)
        out, res = self.report(recs, build="release+PGO")
        self.assertEqual(res["thinlab_build"], "release+PGO")
        self.assertIn("thinlab build: release+PGO", out)

    def test_the_timed_ns3_is_named(self):
        recs = [{"sim": "thinlab", "workload": "dumbbell", "run": 1, "process_wall_s": 0.2,
                 "process_cpu_s": 0.2, "sim_wall_s": 0.15}]
        out, res = self.report(recs)
        self.assertEqual(res["ns3_build"], "PyPI wheel")
        out, res = self.report(recs, build="release", ns3_build="local build /x (profile optimized)")
        self.assertEqual(res["ns3_build"], "local build /x (profile optimized)")
        self.assertIn("ns-3 build:    local build /x (profile optimized)", out)

    def test_best_of_n_and_ratios(self):
        tl = lambda i, w, c, s: {"sim": "thinlab", "workload": "dumbbell", "run": i,
                                 "process_wall_s": w, "process_cpu_s": c, "sim_wall_s": s}
        ns = lambda i, w, c: {"sim": "ns-3", "workload": "dumbbell", "run": i,
                              "process_wall_s": 30, "process_cpu_s": 25, "sim_wall_s": w,
                              "sim_cpu_s": c}
        recs = [tl(1, 0.5, 0.3, 0.4), tl(2, 0.2, 0.25, 0.15), tl(3, 0.4, 0.2, 0.3),
                ns(1, 30.0, 19.0), ns(2, 22.0, 20.0), ns(3, 25.0, 24.0)]
        out, res = self.report(recs)
        w = res["workloads"]["dumbbell"]
        self.assertEqual((w["thinlab_process_wall_s_best"], w["thinlab_process_cpu_s_best"],
                          w["thinlab_sim_wall_s_best"]), (0.2, 0.2, 0.15))
        self.assertEqual((w["ns3_run_wall_s_best"], w["ns3_run_cpu_s_best"]), (22.0, 19.0))
        self.assertAlmostEqual(w["ratio_ns3_over_thinlab_process_wall"], 110.0)
        self.assertAlmostEqual(w["ratio_ns3_over_thinlab_process_cpu"], 95.0)
        self.assertTrue(w["goal_met"])
        self.assertIn("on every workload: MET", out)
        self.assertEqual(len(w["runs"]), 6)
        out, res = self.report(recs, goal=111)
        self.assertFalse(res["all_goals_met"])
        self.assertIn("on every workload: NOT MET", out)


if __name__ == "__main__":
    unittest.main()
