#!/usr/bin/env bash
# thinlab analyze vs tshark on large simulator captures (see bench/README.md).
#
#   bench/analyze-vs-tshark.sh [OUT]         (default target/bench-analyze-vs-tshark)
#
# 1. Generates captures with `thinlab run bench/thinlab/analyze_capture.toml --capture` at
#    SCALES (default "1 2 4") times BASE_MIN (default 70) minutes of simulated time.
# 2. At every scale, times `thinlab analyze SENDER.pcap` (wall time and peak RSS with
#    /usr/bin/time); at the first scale also with `--receiver`.
# 3. On the TSHARK_SCALES (default: the first scale), in the same run, times three tshark
#    passes over the same sender file:
#      read:     tshark -r F -q -o tcp.analyze_sequence_numbers:FALSE -z conv,tcp
#                (dissect every packet, count conversations, no TCP analysis: the least work)
#      conv:     tshark -r F -q -z conv,tcp            (with tshark's default TCP analysis)
#      analysis: tshark -r F -q -o tcp.analyze_sequence_numbers:TRUE
#                  -z io,stat,0,COUNT(tcp.analysis.retransmission)...,AVG(tcp.analysis.ack_rtt)...
# 4. Prints the ratios (tshark / thinlab) and peak RSS against capture length; writes
#    OUT/analyze-vs-tshark.json.
# Knobs: SKIP_BUILD=1, THINLAB_BIN, TSHARK, SCALES, BASE_MIN, TSHARK_SCALES, THINLAB_RUNS
# (best of, default 3), TSHARK_RUNS (default 1), KEEP_CAPTURES=1 (else the pcap files are
# deleted at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/bench-analyze-vs-tshark}
SCALES=${SCALES:-"1 2 4"}
BASE_MIN=${BASE_MIN:-70}
first_scale=${SCALES%% *}
TSHARK_SCALES=${TSHARK_SCALES:-$first_scale}
THINLAB_RUNS=${THINLAB_RUNS:-3}
TSHARK_RUNS=${TSHARK_RUNS:-1}
TSHARK=${TSHARK:-/usr/bin/tshark}
THINLAB_BIN=${THINLAB_BIN:-target/release/thinlab}
TIME=/usr/bin/time
PYTHON=${PYTHON:-python3}

die() { echo "analyze-vs-tshark: $*" >&2; exit 1; }
[ -x "$TIME" ] || die "$TIME not found (apt-get install time)"
[ -x "$TSHARK" ] || die "tshark not found at $TSHARK (apt-get install tshark)"
command -v "$PYTHON" >/dev/null || die "python3 not found"
if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --release -p thinlab >&2 || die "cargo build failed"
fi
[ -x "$THINLAB_BIN" ] || die "no thinlab binary at $THINLAB_BIN"
mkdir -p "$OUT"
RES="$OUT/results.tsv"
: >"$RES"

# measure LABEL SCALE RUNS CMD...: best wall time (s) and its peak RSS (KiB) over RUNS runs,
# appended to $RES.
measure() {
    local label=$1 scale=$2 runs=$3; shift 3
    local best="" best_rss="" i
    for ((i = 0; i < runs; i++)); do
        "$TIME" -f "%e %M" -o "$OUT/time.txt" "$@" >"$OUT/$label-$scale.stdout" 2>"$OUT/$label-$scale.stderr" \
            || die "$label at ${scale}x failed: see $OUT/$label-$scale.stderr"
        read -r wall rss <"$OUT/time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; best_rss=$rss; fi
    done
    printf '%s\t%s\t%s\t%s\n' "$label" "$scale" "$best" "$best_rss" >>"$RES"
    printf '  %-18s %3sx  %8.2f s  %9.1f MB\n' "$label" "$scale" "$best" "$(awk "BEGIN{print $best_rss/1024}")" >&2
}

for s in $SCALES; do
    min=$((BASE_MIN * s))
    gen="$OUT/gen-${s}x"
    echo "generating ${s}x (${min} min simulated) ..." >&2
    rm -rf "$gen"
    "$TIME" -f "%e %M" -o "$OUT/time.txt" "$THINLAB_BIN" run bench/thinlab/analyze_capture.toml \
        --quiet --capture --out "$gen" --set "duration=${min}min" >&2 || die "thinlab run failed"
    printf 'generate\t%s\t%s\t%s\n' "$s" $(cat "$OUT/time.txt") >>"$RES"
    snd=$(ls "$gen"/pcap/*/stream-sender.pcap) || die "no sender capture in $gen/pcap"
    rcv=$(ls "$gen"/pcap/*/stream-receiver.pcap) || die "no receiver capture in $gen/pcap"
    printf 'file\t%s\t%s\t%s\n' "$s" "$snd" "$(stat -c %s "$snd")" >>"$RES"
    measure thinlab "$s" "$THINLAB_RUNS" "$THINLAB_BIN" analyze "$snd" --quiet --out "$OUT/analyze-${s}x"
    if [ "$s" = "$first_scale" ]; then
        measure thinlab-rx "$s" "$THINLAB_RUNS" "$THINLAB_BIN" analyze "$snd" --receiver "$rcv" --quiet --out "$OUT/analyze-rx-${s}x"
    fi
    for t in $TSHARK_SCALES; do
        [ "$t" = "$s" ] || continue
        measure tshark-read "$s" "$TSHARK_RUNS" "$TSHARK" -r "$snd" -q -o tcp.analyze_sequence_numbers:FALSE -z conv,tcp
        measure tshark-conv "$s" "$TSHARK_RUNS" "$TSHARK" -r "$snd" -q -z conv,tcp
        measure tshark-analysis "$s" "$TSHARK_RUNS" "$TSHARK" -r "$snd" -q -o tcp.analyze_sequence_numbers:TRUE \
            -z "io,stat,0,COUNT(tcp.analysis.retransmission)tcp.analysis.retransmission,AVG(tcp.analysis.ack_rtt)tcp.analysis.ack_rtt"
    done
    [ -n "${KEEP_CAPTURES:-}" ] || rm -f "$gen"/pcap/*/*.pcap
done

"$PYTHON" - "$OUT" "$TSHARK" <<'PY'
import json, os, re, subprocess, sys
out, tshark = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(out, "results.tsv"))]
runs, files, gen = {}, {}, {}
for r in rows:
    if r[0] == "file":
        files[r[1]] = {"path": r[2], "bytes": int(r[3])}
    elif r[0] == "generate":
        gen[r[1]] = {"wall_s": float(r[2]), "peak_rss_kb": int(r[3])}
    else:
        runs[(r[0], r[1])] = {"wall_s": float(r[2]), "peak_rss_kb": int(r[3])}
def summary(d):
    return json.load(open(os.path.join(out, d, "summary.json")))
scales = sorted(files, key=int)
result = {"tshark_version": subprocess.run([tshark, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
          "load_average": os.getloadavg(), "nproc": os.cpu_count(), "scales": [], "ratios": []}
print()
print("capture length vs thinlab analyze (sender capture only):")
print(f"{'scale':>5} {'packets':>10} {'MB':>8} {'writes':>9} {'wall s':>7} {'RSS MB':>7} {'RSS - writes*B/write':>21}")
pts = []
for s in scales:
    sm = summary(f"analyze-{s}x")
    st = sm["sender_capture"]
    m = sm["connections"][0]["metrics"] if sm["connections"] else {}
    r = runs[("thinlab", s)]
    pts.append((m.get("writes", 0), r["peak_rss_kb"] * 1024))
    result["scales"].append({"scale": int(s), "file_bytes": files[s]["bytes"], "records": st["records"],
        "tcp_packets": st["tcp_packets"], "writes": m.get("writes"), "retransmissions": m.get("retransmissions"),
        "generate": gen.get(s), "thinlab": r, "thinlab_with_receiver": runs.get(("thinlab-rx", s)),
        "tshark_read": runs.get(("tshark-read", s)), "tshark_conv": runs.get(("tshark-conv", s)), "tshark_analysis": runs.get(("tshark-analysis", s))})
slope = (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0]) if len(pts) > 1 and pts[-1][0] != pts[0][0] else 0.0
result["rss_bytes_per_write"] = slope
for s, (w, rss), e in zip(scales, pts, result["scales"]):
    e["rss_minus_writes_mb"] = (rss - slope * w) / 2**20
    print(f"{s:>4}x {e['records']:>10} {e['file_bytes']/2**20:>8.1f} {w:>9} {e['thinlab']['wall_s']:>7.2f} "
          f"{rss/2**20:>7.1f} {e['rss_minus_writes_mb']:>15.1f} MB")
print(f"slope: {slope:.1f} bytes of peak RSS per write (the per-write records)")
print()
print("tshark / thinlab, same file, same run:")
for e in result["scales"]:
    t = e["thinlab"]
    for name in ("tshark_read", "tshark_conv", "tshark_analysis"):
        x = e[name]
        if not x:
            continue
        ratio = {"scale": e["scale"], "tshark": name, "time_ratio": x["wall_s"] / max(t["wall_s"], 0.01),
                 "rss_ratio": x["peak_rss_kb"] / t["peak_rss_kb"]}
        result["ratios"].append(ratio)
        print(f"  {e['scale']}x {name:<16} {x['wall_s']:>7.2f} s {x['peak_rss_kb']/1024:>8.1f} MB  vs thinlab "
              f"{t['wall_s']:.2f} s {t['peak_rss_kb']/1024:.1f} MB: {ratio['time_ratio']:.1f}x time, {ratio['rss_ratio']:.1f}x memory")
# Sanity: tshark's retransmission count vs thinlab's.
p = os.path.join(out, f"tshark-analysis-{scales[0]}.stdout")
if os.path.exists(p):
    txt = open(p).read()
    m = re.search(r"\|\s*0(?:\.0+)?\s*<>\s*(?:Dur|[0-9.]+)\s*\|\s*(\d+)\s*\|\s*([0-9.]+)\s*\|", txt)
    if m:
        result["tshark_retransmissions"] = int(m.group(1))
        result["tshark_mean_ack_rtt_s"] = float(m.group(2))
        print(f"  sanity: tshark counts {m.group(1)} retransmissions, thinlab {result['scales'][0]['retransmissions']}")
json.dump(result, open(os.path.join(out, "analyze-vs-tshark.json"), "w"), indent=2)
print(f"\nwritten {os.path.join(out, 'analyze-vs-tshark.json')}")
PY
