#!/usr/bin/env bash
# thinlab vs ns-3 (and optionally htsim) benchmark (see bench/README.md).
#
#   bench/vs-ns3.sh [OUT_DIR]          (default OUT_DIR: target/bench-vs-ns3)
#
# Builds thinlab in release, installs ns-3 from PyPI if `from ns import ns` fails, then runs
# both workloads in every simulator on this machine, RUNS rounds of one run of each in turn:
#   (a) thin_stream: 120 B / 140 ms for 30 min, 100 ms RTT, 0.5 % loss
#   (b) dumbbell:    24 CBR (300 kbit/s) + 24 bulk flows, 25 Mbit/s bottleneck, 100 s
# and prints best-of-RUNS wall and CPU times, the ratios ns-3 Run() / thinlab's whole process
# (goal: >= GOAL, default 100, on both; also the median and range of the rounds' own ratios),
# the machine's CPU and caches, and side by side what each simulator did.
# Writes OUT_DIR/vs-ns3.json and keeps every run's output under OUT_DIR.
#
# Environment: RUNS (default 3, the same N for every simulator and workload),
#   WORKLOADS ("thin_stream dumbbell"), PYTHON (python3; resolved to the real interpreter so
#   that a pyenv shim's start-up is not timed), SKIP_BUILD=1 to reuse the binary,
#   THINLAB_BIN (target/release/thinlab; with PGO=1 target/pgo/thinlab), PGO=1 to build and
#   time the profile-guided build (scripts/build-pgo.sh), DUMBBELL_DURATION (seconds, default 100: both
#   simulators), GOAL (100), HTSIM_DUMBBELL / HTSIM_THIN_STREAM (optional: locally built htsim
#   drivers of the workloads, run RUNS times; see docs/performance/comparisons.md, "Against htsim"),
#   NS3_BUILD (optional: an ns-3.44 source tree configured with --enable-python-bindings and
#   built, e.g. with --build-profile=optimized; its bindings are timed instead of the PyPI
#   wheel's; see bench/README.md, "ns-3's build").
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
RUNS="${RUNS:-3}"
GOAL="${GOAL:-100}"
WORKLOADS="${WORKLOADS:-thin_stream dumbbell}"
DUMBBELL_DURATION="${DUMBBELL_DURATION:-100}"
PGO="${PGO:-0}"
[[ "$PGO" == 0 || "$PGO" == 1 ]] || die "PGO must be 0 or 1, got '$PGO'"
# BUILD names what is timed: the release build, the PGO build, or THINLAB_BIN's binary.
if [[ "$PGO" == 1 ]]; then
    BUILD="release+PGO"; DEFAULT_BIN="$ROOT/target/pgo/thinlab"
else
    BUILD=release; DEFAULT_BIN="$ROOT/target/release/thinlab"
fi
if [[ -n "${THINLAB_BIN:-}" ]]; then BUILD="custom: $THINLAB_BIN"; fi
BIN="${THINLAB_BIN:-$DEFAULT_BIN}"
for v in THINLAB_RUNS NS3_RUNS_THIN NS3_RUNS_DUMBBELL; do
    [[ -z "${!v:-}" ]] || die "$v is gone: RUNS sets the number of runs of every simulator"
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
[[ "$DUMBBELL_DURATION" =~ ^[1-9][0-9]*$ ]] || die "DUMBBELL_DURATION must be whole seconds, got '$DUMBBELL_DURATION'"

command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found: Python 3 (>= 3.8) is needed for ns-3 and for timing/JSON"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' \
    || die "'$PYTHON' is older than Python 3.8"
# A pyenv shim is a shell script that starts pyenv before the interpreter: time the
# interpreter itself.
PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')"
[[ -x "$PYTHON" ]] || die "cannot resolve the Python interpreter ($PYTHON)"
for v in HTSIM_DUMBBELL HTSIM_THIN_STREAM; do
    [[ -z "${!v:-}" || -x "${!v}" ]] || die "$v=${!v} is not an executable"
done

# --- thinlab -----------------------------------------------------------------------------
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust (https://rustup.rs) or set SKIP_BUILD=1 with an existing $BIN"
    if [[ "$PGO" == 1 ]]; then
        log "building thinlab with profile-guided optimisation (scripts/build-pgo.sh)"
        "$ROOT/scripts/build-pgo.sh" >&2 || die "scripts/build-pgo.sh failed"
    else
        log "building thinlab (cargo build --release -p thinlab)"
        cargo build --release -p thinlab >&2 || die "cargo build --release -p thinlab failed"
    fi
fi
[[ -x "$BIN" ]] || die "$BIN does not exist (build failed or SKIP_BUILD=1 without a build)"

# --- ns-3 --------------------------------------------------------------------------------
# Which ns-3 is timed: the PyPI wheel, or a local build's bindings (NS3_BUILD).
if [[ -n "${NS3_BUILD:-}" ]]; then
    bindings="$NS3_BUILD/build/bindings/python"
    lock="$NS3_BUILD/.lock-ns3_$(uname -s | tr '[:upper:]' '[:lower:]')_build"
    [[ -f "$bindings/ns/__init__.py" && -f "$lock" ]] \
        || die "NS3_BUILD=$NS3_BUILD is not a configured and built ns-3 tree with Python bindings (no $bindings/ns/__init__.py or $lock)"
    export PYTHONPATH="$bindings${PYTHONPATH:+:$PYTHONPATH}"
    profile="$(sed -n "s/^BUILD_PROFILE = '\(.*\)'.*/\1/p" "$lock")"
    NS3_LABEL="local build $NS3_BUILD (profile ${profile:-unknown})"
    "$PYTHON" -c 'import ns, sys; sys.exit(0 if ns.__file__.startswith(sys.argv[1]) else 1)' "$bindings" \
        || die "'import ns' does not take NS3_BUILD's bindings ($bindings)"
    "$PYTHON" -c 'from ns import ns' >/dev/null 2>&1 || die "NS3_BUILD's bindings do not import: $PYTHON -c 'from ns import ns'"
else
    NS3_LABEL="PyPI wheel ns3 (release profile, logging and asserts compiled in)"
fi
if ! "$PYTHON" -c 'from ns import ns' >/dev/null 2>&1; then
    log "ns-3 Python bindings not importable; installing from PyPI: $PYTHON -m pip install ns3"
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "pip is not available for $PYTHON (try: $PYTHON -m ensurepip)"
    "$PYTHON" -m pip install ns3 >&2 || die "pip install ns3 failed"
    "$PYTHON" -c 'from ns import ns' >/dev/null 2>&1 || die "ns-3 installed but 'from ns import ns' still fails"
fi

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
: > "$OUT/runs.jsonl"
UPTIME_START="$(uptime)"
RECORD="$ROOT/bench/vs_ns3_record.py"

# Time a command with a monotonic clock; prints "WALL CPU" seconds on stdout (CPU: user +
# system of the command and its children). The command's own stdout goes to $1, stderr to $2.
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

# run SIM WORKLOAD I DIR CMD...: time CMD in DIR and append its record to runs.jsonl.
run() {
    local sim="$1" w="$2" i="$3" d="$4" t; shift 4
    rm -rf "$d"; mkdir -p "$d"
    log "$w: $sim run $i/$RUNS"
    t=$(timed "$d/stdout.txt" "$d/stderr.txt" "$@") || die "$sim failed on $w (see $d/stderr.txt)"
    "$PYTHON" "$RECORD" "$sim" "$w" "$i" "$t" "$d" >>"$OUT/runs.jsonl" \
        || die "could not read the results of $sim in $d"
}

for w in $WORKLOADS; do
    scen="bench/thinlab/$w.toml"; nsscript="bench/ns3/$w.py"
    [[ -f "$scen" ]] || die "missing $scen"
    [[ -f "$nsscript" ]] || die "missing $nsscript"
    tl_args=(); ns_args=(); ht_args=(); htsim="${HTSIM_THIN_STREAM:-}"
    if [[ "$w" == dumbbell ]]; then
        tl_args=(--set "duration=${DUMBBELL_DURATION}s"); ns_args=(--duration "$DUMBBELL_DURATION")
        ht_args=(-dur "$DUMBBELL_DURATION"); htsim="${HTSIM_DUMBBELL:-}"
    fi
    # Round i runs every simulator once, in turn: on a machine whose speed drifts from one
    # minute to the next, the runs of one round meet the same machine, and the report gives
    # the per-round ratios beside the best-of-N ones.
    for ((i = 1; i <= RUNS; i++)); do
        d="$OUT/thinlab-$w-$i"
        run thinlab "$w" "$i" "$d" "$BIN" run "$scen" --quiet --out "$d/out" "${tl_args[@]}"
        # about 15 s of Python import and cling JIT before each simulation
        run ns-3 "$w" "$i" "$OUT/ns3-$w-$i" "$PYTHON" "$ROOT/$nsscript" "${ns_args[@]}"
        if [[ -n "$htsim" ]]; then
            run htsim "$w" "$i" "$OUT/htsim-$w-$i" "$htsim" "${ht_args[@]}"
        fi
    done
done

# --- report ------------------------------------------------------------------------------
"$PYTHON" "$ROOT/bench/vs_ns3_report.py" "$OUT" "$GOAL" "$UPTIME_START" "$BUILD" "$NS3_LABEL"
}

main "$@"
exit $?
