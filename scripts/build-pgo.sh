#!/usr/bin/env bash
# Builds `thinlab` with profile-guided optimisation (PGO). An instrumented build first runs a
# training set of what thinlab is used for (the benchmark workloads, the committed scenarios,
# many flows at once, capture analysis, what-if replays and every reproduction in its quick
# form); LLVM merges the counts, and the release build then uses them to decide what to
# inline and how to lay out the hot paths (every loop aligned to 64 bytes, so that the layout
# varies less from build to build). The simulator runs 10–20 % faster, and
# every result is byte-identical to a plain build's (docs/performance/builds.md, "Profile-guided
# build").
#
# On Linux with glibc the binary links glibc statically: the thin-stream benchmark's whole
# process runs 12–14 % faster, the dumbbell's simulation 0–2 %, a long single stream 3–4 %
# slower (docs/performance/builds.md, "A static binary for the benchmarks").
#
#   scripts/build-pgo.sh             # -> target/pgo/thinlab
#   scripts/build-pgo.sh --install   # and copies it to ~/.cargo/bin/thinlab (as cargo install)
#
# Needs the compiler's own llvm-profdata: rustup's llvm-tools component, added when missing
# (exit status 3 when it cannot be had). The dependencies are compiled once, uninstrumented,
# and thinlab's own crates twice (instrumented, then optimised with the profile), through the
# compiler wrapper scripts/pgo-rustc.sh; with the training, one run at a time, that took
# 597 s from scratch on the 2-core Zen 3 VM (808 s when both builds compiled everything) and
# about 5 min on the Zen 4 VMs. RUSTFLAGS are kept (CARGO_ENCODED_RUSTFLAGS is replaced). The
# builds name the host as their target, so that the flags reach the binary's crates only,
# never the build scripts and proc macros (a static glibc there would break the proc macros,
# which are loaded as shared libraries).
set -euo pipefail

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build-pgo: %s\n' "$*" >&2; exit 1; }

install=0
for a in "$@"; do
    case "$a" in
        --install) install=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$a' (try --help)" ;;
    esac
done

cd "$(dirname "$0")/.."
ROOT=$PWD
WORK="$ROOT/target/pgo"
RUSTC="${RUSTC:-rustc}"
# Cargo takes the flags from CARGO_ENCODED_RUSTFLAGS (0x1f-separated, so paths may hold
# spaces); the caller's RUSTFLAGS are kept before the alignment and profile flags.
unset CARGO_ENCODED_RUSTFLAGS
flags_with() {
    local - out="" f
    set -f # RUSTFLAGS is split on spaces, never globbed
    for f in ${RUSTFLAGS:-} "$@"; do out+="$f"$'\x1f'; done
    printf '%s' "${out%$'\x1f'}"
}
# Every loop starts on a 64-byte boundary. Two PGO builds of nearly the same simulation code
# (80.68 and 80.58 M instructions on the thin stream) otherwise ran 22 % apart, by where their
# hot loops fell; built with this, the slower one's code came within 2.4 % of the faster build
# (one pair measured: docs/performance/many-flows.md, "Loops aligned in the PGO build").
ALIGN="-Cllvm-args=-align-loops=64"
# glibc linked statically (`crt-static`, on Linux with glibc only): no dynamic loader, no
# relocations at start-up, direct calls into glibc. A plain release build so linked ran the
# thin-stream benchmark's whole process 5.9 % faster (its start-up alone, `thinlab --version`:
# 0.76 ms against 1.17 ms). thinlab looks up no host or user names, which a static glibc could
# not do without its shared libraries.
STATIC=()

command -v cargo >/dev/null || die "cargo not found (install Rust from https://rustup.rs)"
host=$("$RUSTC" -vV | sed -n 's/^host: //p')
# (not position-independent: a static PIE with the profiler's runtime crashed at start)
case "$host" in *-linux-gnu*) STATIC=("-Ctarget-feature=+crt-static" "-Crelocation-model=static") ;; esac
profdata="$("$RUSTC" --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null; then
    log "adding rustup's llvm-tools component (llvm-profdata)"
    rustup component add llvm-tools >&2 || true
fi
if [ ! -x "$profdata" ]; then
    printf 'build-pgo: no llvm-profdata for this compiler at %s; %s\n' "$profdata" \
        "'rustup component add llvm-tools' provides it (or build without PGO: cargo install --path crates/cli)" >&2
    exit 3
fi

start=$(date +%s)
rm -rf "$WORK/thinlab"
# One target directory for both builds. The dependencies get the alignment and static flags
# only, and are compiled once; thinlab's own crates also get the phase's profile flag, through
# the compiler wrapper scripts/pgo-rustc.sh (cargo's RUSTC_WORKSPACE_WRAPPER), and are compiled
# again for each phase. Before, both builds compiled everything, dependencies instrumented too.
BUILD="$WORK/build"
rm -rf "$WORK/gen" "$WORK/use" # the two target directories of the script before 2026-11-29
export CARGO_ENCODED_RUSTFLAGS
CARGO_ENCODED_RUSTFLAGS="$(flags_with "$ALIGN" ${STATIC[@]+"${STATIC[@]}"})"
# thinlab's own crates in the binary (the packages with a path inside this repository)
mapfile -t OWN < <(cargo tree -p thinlab --locked --prefix none -e normal,build |
    sed -n "s|^\([^ ]*\) v[^ ]* (${ROOT}/.*|\1|p" | sort -u)
[ "${#OWN[@]}" -gt 0 ] || die "cargo tree named none of thinlab's own crates"
# build PHASE FLAG: thinlab's own crates cleaned, then built with FLAG added; every one of them
# must have been compiled with it (noted by the wrapper in $WORK/PHASE.crates).
build() {
    local phase=$1 flag=$2 pkgs=() p
    for p in "${OWN[@]}"; do pkgs+=(-p "$p"); done
    cargo clean --release --target "$host" --target-dir "$BUILD" "${pkgs[@]}" 2>/dev/null || true
    rm -f "$WORK/$phase.crates"
    THINLAB_PGO_FLAG="$flag" THINLAB_PGO_LOG="$WORK/$phase.crates" \
        RUSTC_WORKSPACE_WRAPPER="$ROOT/scripts/pgo-rustc.sh" \
        cargo build --release --locked -p thinlab --target "$host" --target-dir "$BUILD"
    for p in "${OWN[@]}"; do
        grep -qx "${p//-/_}" "$WORK/$phase.crates" 2>/dev/null ||
            die "the $phase build did not compile $p with $flag"
    done
}

log "1/3 instrumented build (target/pgo/build)"
build gen "-Cprofile-generate=$WORK/raw"
# The profile is the training runs' alone (nothing the build ran was instrumented; counts that
# an interrupted training left are dropped).
rm -rf "$WORK/raw"
mkdir -p "$WORK/raw"

log "2/3 training runs"
# The training set: what thinlab is used for, one run at a time (--jobs 1). With PGO's
# instrumentation the counters are plain increments, and two threads running the simulator (or
# a run's metrics) at once lose some of them at random, so that two profiles of the same
# training differed (docs/performance/builds.md, "Profile-guided build"). Atomic counters would keep
# them, but made the training slower than running it on one thread.
t="$WORK/thinlab.gen"
cp "$BUILD/$host/release/thinlab" "$t"
out="$WORK/train"
rm -rf "$out"
mkdir -p "$out"
"$t" run bench/thinlab/dumbbell.toml -q --jobs 1 --out "$out/dumbbell" --set duration=30s
"$t" run bench/thinlab/thin_stream.toml -q --jobs 1 --out "$out/thin_stream"
for s in scenarios/*.toml; do
    "$t" run "$s" -q --jobs 1 --out "$out/$(basename "$s" .toml)"
done
# many thin streams at once (the `linux` profile: RACK, TLP, PRR) and bulk flows beside them
many="$out/many.toml"
{
    printf 'name = "pgo-many"\nseed = 1\nduration = "10s"\n\n[network]\nrtt = "100ms"\n'
    printf 'bandwidth = "100Mbit"\nqueue_packets = 500\n\n[network.loss]\nmodel = "bernoulli"\nrate = 0.005\n'
    for i in $(seq 0 499); do
        printf '\n[[flow]]\nname = "thin%d"\nstart = "%dms"\n' "$i" $((i * 140 / 500))
        printf 'app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }\n'
        printf 'tcp = { profile = "linux", nodelay = true }\n'
    done
    for i in 0 1 2 3; do
        printf '\n[[flow]]\nname = "bulk%d"\napp = { kind = "bulk" }\ntcp = { profile = "linux" }\n' "$i"
    done
} >"$many"
"$t" run "$many" -q --jobs 1 --out "$out/many"
"$t" analyze tests/data/kernel-140ms-sender.pcap \
    --receiver tests/data/kernel-140ms-receiver.pcap --out "$out/analyze" >/dev/null
"$t" whatif tests/data/kernel-140ms-sender.pcap --jobs 1 \
    --receiver tests/data/kernel-140ms-receiver.pcap --out "$out/whatif" >/dev/null
"$t" reproduce all --quick -q --jobs 1 --out "$out/reproduce"
rm -rf "$out"
"$profdata" merge -o "$WORK/merged.profdata" "$WORK/raw"
rm -rf "$WORK/raw"

log "3/3 optimised build (target/pgo/build)"
build use "-Cprofile-use=$WORK/merged.profdata"
rm -f "$t"
cp "$BUILD/$host/release/thinlab" "$WORK/thinlab.new"
mv "$WORK/thinlab.new" "$WORK/thinlab"
log "built target/pgo/thinlab in $(($(date +%s) - start)) s"

if [ "$install" = 1 ]; then
    dest="${CARGO_HOME:-$HOME/.cargo}/bin"
    mkdir -p "$dest"
    install -m 755 "$WORK/thinlab" "$dest/thinlab"
    log "installed $dest/thinlab"
fi
