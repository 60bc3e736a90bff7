#!/usr/bin/env bash
# thinlab vs ns-3 wall-time benchmark (see bench/README.md).
#
#   bench/vs-ns3.sh [OUT_DIR]          (default OUT_DIR: target/bench-vs-ns3)
#
# Builds thinlab in release, installs ns-3 from PyPI if `from ns import ns` fails, then runs
# both workloads in both simulators on this machine, one after the other:
#   (a) thin_stream: 120 B / 140 ms for 30 min, 100 ms RTT, 0.5 % loss
#   (b) dumbbell:    24 CBR (300 kbit/s) + 24 bulk flows, 25 Mbit/s bottleneck, 100 s
# and prints wall times and the ratio ns-3 / thinlab (goal: >= 50x on both).
# Writes OUT_DIR/vs-ns3.json and keeps every run's output under OUT_DIR.
#
# Environment: THINLAB_RUNS (default 3), NS3_RUNS_THIN (3), NS3_RUNS_DUMBBELL (1),
#   WORKLOADS ("thin_stream dumbbell"), PYTHON (python3), SKIP_BUILD=1 to reuse the binary,
#   THINLAB_BIN (target/release/thinlab).
set -euo pipefail

# Everything runs inside main(), which bash parses completely before running it, so editing
# this file while a benchmark is running cannot break the run in progress.
main() {
die() { echo "vs-ns3: error: $*" >&2; exit 1; }
log() { echo "vs-ns3: $*" >&2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-target/bench-vs-ns3}"
PYTHON="${PYTHON:-python3}"
THINLAB_RUNS="${THINLAB_RUNS:-3}"
NS3_RUNS_THIN="${NS3_RUNS_THIN:-3}"
NS3_RUNS_DUMBBELL="${NS3_RUNS_DUMBBELL:-1}"
WORKLOADS="${WORKLOADS:-thin_stream dumbbell}"
BIN="${THINLAB_BIN:-$ROOT/target/release/thinlab}"

command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found: Python 3 (>= 3.8) is needed for ns-3 and for timing/JSON"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' \
    || die "'$PYTHON' is older than Python 3.8"

# --- thinlab -----------------------------------------------------------------------------
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust (https://rustup.rs) or set SKIP_BUILD=1 with an existing $BIN"
    log "building thinlab (cargo build --release -p thinlab)"
    cargo build --release -p thinlab >&2 || die "cargo build --release -p thinlab failed"
fi
[[ -x "$BIN" ]] || die "$BIN does not exist (build failed or SKIP_BUILD=1 without a build)"

# --- ns-3 --------------------------------------------------------------------------------
if ! "$PYTHON" -c 'from ns import ns' >/dev/null 2>&1; then
    log "ns-3 Python bindings not importable; installing from PyPI: $PYTHON -m pip install ns3"
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "pip is not available for $PYTHON (try: $PYTHON -m ensurepip)"
    "$PYTHON" -m pip install ns3 >&2 || die "pip install ns3 failed"
    "$PYTHON" -c 'from ns import ns' >/dev/null 2>&1 || die "ns-3 installed but 'from ns import ns' still fails"
fi

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
: > "$OUT/runs.jsonl"

# Time a command with a monotonic clock; prints the seconds on stdout. The command's own
# stdout goes to $2, stderr to $3.
timed() {
    local so="$1" se="$2"; shift 2
    "$PYTHON" - "$so" "$se" "$@" <<'PY'
import resource, subprocess, sys, time
so, se, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(so, "w") as o, open(se, "w") as e:
    t = time.monotonic()
    r = subprocess.run(cmd, stdout=o, stderr=e)
    dt = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if r.returncode != 0:
    sys.stderr.write(f"vs-ns3: command failed (exit {r.returncode}): {' '.join(cmd)}\n")
    sys.stderr.write(open(se).read()[-3000:])
    sys.exit(1)
print(f"{dt:.6f} {ru.ru_utime + ru.ru_stime:.6f}")
PY
}

for w in $WORKLOADS; do
    scen="bench/thinlab/$w.toml"; nsscript="bench/ns3/$w.py"
    [[ -f "$scen" ]] || die "missing $scen"
    [[ -f "$nsscript" ]] || die "missing $nsscript"
    case "$w" in thin_stream) nsruns=$NS3_RUNS_THIN ;; *) nsruns=$NS3_RUNS_DUMBBELL ;; esac

    for ((i = 1; i <= THINLAB_RUNS; i++)); do
        d="$OUT/thinlab-$w-$i"; rm -rf "$d"; mkdir -p "$d"
        log "$w: thinlab run $i/$THINLAB_RUNS"
        t=$(timed "$d/stdout.txt" "$d/stderr.txt" "$BIN" run "$scen" --quiet --out "$d") \
            || die "thinlab failed on $scen (see $d/stderr.txt)"
        "$PYTHON" - "$w" "$i" "$t" "$d" >>"$OUT/runs.jsonl" <<'PY'
import json, sys
w, i, d = sys.argv[1], int(sys.argv[2]), sys.argv[4]
t, cpu = (float(x) for x in sys.argv[3].split())
rec = {"sim": "thinlab", "workload": w, "run": i, "process_wall_s": t, "process_cpu_s": cpu,
       "sim_wall_s": None}
try:
    s = json.load(open(f"{d}/summary.json"))
except Exception as e:  # noqa: BLE001
    s = None
    rec["summary_error"] = str(e)
# thinlab's own simulate-only time: timing.json (`sim_wall_s`, summed over runs), written
# next to summary.json, which stays deterministic and carries no wall times.
try:
    t = json.load(open(f"{d}/timing.json"))
    if isinstance(t.get("sim_wall_s"), (int, float)):
        rec["sim_wall_s"] = float(t["sim_wall_s"])
except Exception as e:  # noqa: BLE001
    rec["timing_error"] = str(e)
if isinstance(s, dict):
    flows = [f for r in (s.get("runs") or []) for f in r.get("flows", [])]
    for k in ("events_processed", "dropped_queue", "dropped_loss"):
        v = [r.get(k) for r in (s.get("runs") or []) if isinstance(r.get(k), (int, float))]
        rec[k] = sum(v) if v else None
    def tot(key):
        v = [f.get("metrics", {}).get(key) for f in flows]
        v = [x for x in v if isinstance(x, (int, float))]
        return sum(v) if v else None
    rec["bytes_delivered"] = tot("bytes_delivered")
    rec["retransmissions"] = tot("retransmissions")
    g = tot("goodput_bps")
    rec["goodput_mbps_total"] = round(g / 1e6, 4) if g is not None else None
    lat = [f.get("metrics", {}).get("app_latency_ms") for f in flows]
    if w == "thin_stream" and lat and isinstance(lat[0], dict):
        rec["app_latency_ms"] = {k: lat[0].get(k) for k in ("mean", "p50", "p99", "p999", "max")}
print(json.dumps(rec))
PY
    done

    for ((i = 1; i <= nsruns; i++)); do
        d="$OUT/ns3-$w-$i"; rm -rf "$d"; mkdir -p "$d"
        log "$w: ns-3 run $i/$nsruns (about 15 s of import/JIT before the simulation)"
        t=$(cd bench/ns3 && timed "$d/stdout.txt" "$d/stderr.txt" "$PYTHON" "$w.py") \
            || die "ns-3 failed on $nsscript (see $d/stderr.txt)"
        "$PYTHON" - "$w" "$i" "$t" "$d" >>"$OUT/runs.jsonl" <<'PY'
import json, sys
w, i, d = sys.argv[1], int(sys.argv[2]), sys.argv[4]
t, cpu = (float(x) for x in sys.argv[3].split())
lines = [l for l in open(f"{d}/stdout.txt") if l.startswith("{")]
r = json.loads(lines[-1])
rec = {"sim": "ns-3", "workload": w, "run": i, "process_wall_s": t, "process_cpu_s": cpu,
       "sim_wall_s": r["wall_s"], "sim_cpu_s": r.get("cpu_s"), "ns3": r}
print(json.dumps(rec))
PY
    done
done

# --- report ------------------------------------------------------------------------------
"$PYTHON" - "$OUT" <<'PY'
import datetime, json, os, platform, sys
out = sys.argv[1]
recs = [json.loads(l) for l in open(f"{out}/runs.jsonl")]
cpu = "?"
try:
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            cpu = l.split(":", 1)[1].strip(); break
except OSError:
    pass
result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
          "host": {"cpus": os.cpu_count(), "cpu": cpu, "platform": platform.platform(),
                   "loadavg_at_end": os.getloadavg()},
          "goal_ratio": 50, "workloads": {}}
def best(vals):
    vals = [v for v in vals if isinstance(v, (int, float))]
    return min(vals) if vals else None
print()
hdr = f"{'workload':<12} {'thinlab s':>10} {'(sim-only)':>10} {'ns-3 s':>9} {'ratio':>8} {'(sim-only)':>10}  goal >= 50x"
print(hdr); print("-" * len(hdr))
all_ok = True
for w in dict.fromkeys(r["workload"] for r in recs):
    tl = [r for r in recs if r["workload"] == w and r["sim"] == "thinlab"]
    n3 = [r for r in recs if r["workload"] == w and r["sim"] == "ns-3"]
    tl_proc = best(r["process_wall_s"] for r in tl)
    tl_sim = best(r["sim_wall_s"] for r in tl)
    ns_run = best(r["sim_wall_s"] for r in n3)  # Simulator::Run() only
    tl_cpu = best(r.get("process_cpu_s") for r in tl)
    ns_cpu = best(r.get("sim_cpu_s") for r in n3)
    ratio_cpu = ns_cpu / tl_cpu if tl_cpu and ns_cpu else None
    ratio = ns_run / tl_proc if tl_proc and ns_run else None
    ratio_sim = ns_run / tl_sim if tl_sim and ns_run else None
    ok = ratio is not None and ratio >= 50
    ok_sim = ratio_sim is not None and ratio_sim >= 50
    all_ok &= ok
    verdict = "MET" if ok else ("MET on sim-only" if ok_sim else "NOT MET")
    f = lambda v, p=3: "n/a" if v is None else f"{v:.{p}f}"
    fx = lambda v: "n/a" if v is None else f"{v:.1f}x"
    print(f"{w:<12} {f(tl_proc):>10} {f(tl_sim):>10} {f(ns_run):>9} {fx(ratio):>8} "
          f"{fx(ratio_sim):>10}  {verdict}")
    result["workloads"][w] = {
        "thinlab_process_wall_s_best": tl_proc, "thinlab_sim_wall_s_best": tl_sim,
        "ns3_run_wall_s_best": ns_run,
        "ratio_ns3_over_thinlab_process": ratio, "ratio_ns3_over_thinlab_sim": ratio_sim,
        "thinlab_process_cpu_s_best": tl_cpu, "ns3_run_cpu_s_best": ns_cpu,
        "ratio_cpu": ratio_cpu,
        "goal_met": ok, "goal_met_sim_only": ok_sim, "runs": tl + n3}
print()
print("thinlab s: best wall time of the whole `thinlab run` process (parse, simulate, metrics,")
print("  files); sim-only: thinlab's own simulate time (sim_wall_s of OUT/thinlab-<w>-<i>/timing.json).")
print("ns-3 s: best wall time of Simulator::Run() only (no Python import/JIT, no setup).")
print("ratio: ns-3 / thinlab process (conservative); second column: ns-3 / thinlab sim-only.")
print("CPU times are in the JSON only: thinlab's include its idle rayon workers spinning.")
for w, v in result["workloads"].items():
    for r in v["runs"]:
        if r["sim"] == "ns-3":
            n = r["ns3"]
            keys = [k for k in ("events", "packets", "bytes_delivered", "retransmissions",
                                "total_goodput_mbps", "bulk_goodput_mbps_total",
                                "cbr_goodput_mbps_total", "bottleneck_queue_drops") if k in n]
            print(f"  sanity {w} ns-3 run {r['run']}: " + ", ".join(f"{k}={n[k]}" for k in keys))
        else:
            keys = [k for k in ("events_processed", "bytes_delivered", "retransmissions",
                                "goodput_mbps_total", "dropped_queue", "dropped_loss")
                    if r.get(k) is not None]
            print(f"  sanity {w} thinlab run {r['run']}: " + ", ".join(f"{k}={r[k]}" for k in keys))
result["all_goals_met"] = all_ok
json.dump(result, open(f"{out}/vs-ns3.json", "w"), indent=2)
print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (other work skews timings)")
print(f"\nwrote {out}/vs-ns3.json")
PY
}

main "$@"
exit $?
