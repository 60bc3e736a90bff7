#!/usr/bin/env python3
"""The report of bench/vs-ns3.sh: reads OUT/runs.jsonl (one line per run, written by
bench/vs_ns3_record.py), prints the machine (CPU family and model, caches), the speed table
(best of N for every simulator, wall and CPU ratios against thinlab's whole process), the
ratios within each round (median and range: the runs of one round met the same machine) and
the work table (what each simulator did in its last run: events, packets, drops, goodput,
retransmissions, RTOs), and writes OUT/vs-ns3.json.

    vs_ns3_report.py OUT GOAL "UPTIME AT START"
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys


def best(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return min(vals) if vals else None


def fmt(v, p=3):
    return "n/a" if v is None else f"{v:.{p}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def fx(v):
    return "n/a" if v is None else f"{v:.1f}x"


def round_ratios(others, thinlab, other_key, thinlab_key):
    """The ratio other / thinlab within each round (runs paired by their number): median,
    range and how many rounds had both figures; None without a pair."""
    tl = {r["run"]: r.get(thinlab_key) for r in thinlab}
    q = [r.get(other_key) / tl[r["run"]] for r in others
         if isinstance(r.get(other_key), (int, float)) and tl.get(r["run"])]
    if not q:
        return None
    return {"median": statistics.median(q), "min": min(q), "max": max(q), "rounds": len(q)}


def machine(cpuinfo="/proc/cpuinfo", caches="/sys/devices/system/cpu/cpu0/cache"):
    """The CPU and its caches, as far as this system tells: figures from two machine classes
    (say, one with half the other's second-level cache) are not comparable."""
    m = {"cpu": "?", "cpu_family": None, "cpu_model": None, "caches": {}}
    keys = {"model name": "cpu", "cpu family": "cpu_family", "model": "cpu_model"}
    try:
        for line in open(cpuinfo):
            k, _, v = line.partition(":")
            k = k.strip()
            if k in keys and (m[keys[k]] in (None, "?")):
                m[keys[k]] = v.strip()
            if not line.strip():
                break  # the first CPU only
    except OSError:
        pass
    try:
        for d in sorted(os.listdir(caches)):
            if not d.startswith("index"):
                continue
            read = lambda f: open(os.path.join(caches, d, f)).read().strip()
            kind = {"Data": "d", "Instruction": "i"}.get(read("type"), "")
            m["caches"][f"L{read('level')}{kind}"] = read("size")
    except OSError:
        pass
    return m


def machine_line(m):
    ident = m["cpu"]
    if m["cpu_family"] is not None:
        ident += f" (family {m['cpu_family']}, model {m['cpu_model']})"
    caches = ", ".join(f"{k} {v}" for k, v in m["caches"].items()) or "caches unknown"
    return f"{ident}; {caches}"


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()}"


WORK_KEYS = ("events", "packet_hops", "data_segments_sent", "bytes_delivered",
             "retransmissions", "fast_recoveries", "rto_events", "queue_drops", "loss_drops",
             "goodput_mbps", "cbr_goodput_mbps", "bulk_goodput_mbps")


def main():
    out, goal, uptime_start = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    # which thinlab build was timed (vs-ns3.sh: "release" or "release+PGO")
    build = sys.argv[4] if len(sys.argv) > 4 else "release"
    # which ns-3 was timed (vs-ns3.sh: the PyPI wheel, or NS3_BUILD's bindings)
    ns3_build = sys.argv[5] if len(sys.argv) > 5 else "PyPI wheel"
    recs = [json.loads(line) for line in open(f"{out}/runs.jsonl")]
    m = machine(os.environ.get("VS_NS3_CPUINFO", "/proc/cpuinfo"),
                os.environ.get("VS_NS3_CACHES", "/sys/devices/system/cpu/cpu0/cache"))
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "host": {"cpus": os.cpu_count(), **m, "platform": platform.platform()},
              "uptime_start": uptime_start, "uptime_end": uptime(), "goal_ratio": goal,
              "thinlab_build": build, "ns3_build": ns3_build, "workloads": {}}
    print()
    print(f"thinlab build: {build}")
    print(f"ns-3 build:    {ns3_build}")
    print(f"machine:       {os.cpu_count()} CPUs, {machine_line(m)}")
    hdr = (f"{'workload':<12} {'sim':<8} {'N':>2} {'wall s':>9} {'CPU s':>9} "
           f"{'ratio wall':>10} {'ratio CPU':>9} {'vs sim-only':>11}")
    print(hdr)
    print("-" * len(hdr))
    all_ok = True
    rounds_lines = []
    for w in dict.fromkeys(r["workload"] for r in recs):
        by = {s: [r for r in recs if r["workload"] == w and r["sim"] == s]
              for s in ("thinlab", "ns-3", "htsim")}
        tl = by["thinlab"]
        tl_wall = best(r["process_wall_s"] for r in tl)
        tl_cpu = best(r["process_cpu_s"] for r in tl)
        tl_sim = best(r.get("sim_wall_s") for r in tl)
        entry = {"thinlab_process_wall_s_best": tl_wall, "thinlab_process_cpu_s_best": tl_cpu,
                 "thinlab_sim_wall_s_best": tl_sim, "runs": []}
        print(f"{w:<12} {'thinlab':<8} {len(tl):>2} {fmt(tl_wall, 4):>9} {fmt(tl_cpu, 4):>9} "
              f"{'(process)':>10} {'':>9} {'sim ' + fmt(tl_sim, 4):>11}")
        for s in ("ns-3", "htsim"):
            rs = by[s]
            if not rs:
                continue
            wall = best(r["sim_wall_s"] for r in rs)
            c = best(r.get("sim_cpu_s") for r in rs)
            rw, rc, rsim = ratio(wall, tl_wall), ratio(c, tl_cpu), ratio(wall, tl_sim)
            print(f"{w:<12} {s:<8} {len(rs):>2} {fmt(wall, 4):>9} {fmt(c, 4):>9} {fx(rw):>10} "
                  f"{fx(rc):>9} {fx(rsim):>11}")
            key = s.replace("-", "")
            entry.update({f"{key}_run_wall_s_best": wall, f"{key}_run_cpu_s_best": c,
                          f"ratio_{key}_over_thinlab_process_wall": rw,
                          f"ratio_{key}_over_thinlab_process_cpu": rc,
                          f"ratio_{key}_over_thinlab_sim": rsim,
                          f"{key}_process_wall_s_best": best(r["process_wall_s"] for r in rs),
                          f"{key}_process_cpu_s_best": best(r["process_cpu_s"] for r in rs)})
            for span, tl_key in (("process_wall", "process_wall_s"), ("sim", "sim_wall_s")):
                rr = round_ratios(rs, tl, "sim_wall_s", tl_key)
                entry[f"ratio_{key}_over_thinlab_{span}_rounds"] = rr
                if rr:
                    rounds_lines.append(
                        f"{w:<12} {s:<8} / thinlab {'process' if span == 'process_wall' else 'sim':<8}"
                        f" median {fx(rr['median']):>7}, range {rr['min']:.2f}-{rr['max']:.2f}x"
                        f" ({rr['rounds']} rounds)")
            if s == "ns-3":
                ok = rw is not None and rw >= goal
                entry["goal_met"] = ok
                all_ok &= ok
        for s in ("thinlab", "ns-3", "htsim"):
            entry["runs"] += by[s]
        result["workloads"][w] = entry
    print()
    print("wall s: best of N; thinlab: the whole `thinlab run` process (start-up, parse, simulate,")
    print("  metrics, files; 'sim' is its simulate-only time from timing.json); ns-3: Simulator.Run()")
    print("  alone (no Python import/JIT, no setup); htsim: its event loop alone.")
    print("CPU s: the same spans in CPU time (thinlab: user+sys of its process; ns-3: process_time()")
    print("  around Run(); htsim: clock() around its loop). ratio = other / thinlab process.")
    if rounds_lines:
        print()
        print("Wall-time ratios within each round (round i ran every simulator once, in turn):")
        for line in rounds_lines:
            print("  " + line)
    print()
    print("Work done (last run of each simulator; these are different models of the same experiment):")
    for w, entry in result["workloads"].items():
        last = {}
        for r in entry["runs"]:
            last[r["sim"]] = r
        sims = [s for s in ("thinlab", "ns-3", "htsim") if s in last]
        print(f"  {w}: " + " | ".join(sims))
        for k in WORK_KEYS:
            vals = [last[s].get(k) for s in sims]
            if all(v is None for v in vals):
                continue
            print(f"    {k:<20} " + " | ".join("n/a" if v is None else str(v) for v in vals))
    result["all_goals_met"] = all_ok
    json.dump(result, open(f"{out}/vs-ns3.json", "w"), indent=2)
    print()
    print(f"load at the start: {uptime_start}")
    print(f"load at the end:   {result['uptime_end']}")
    print(f"goal: ns-3 Run() / thinlab whole process >= {goal:g}x on every workload: "
          f"{'MET' if all_ok else 'NOT MET'}")
    print(f"\nwrote {out}/vs-ns3.json")


if __name__ == "__main__":
    main()
