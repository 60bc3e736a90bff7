#!/usr/bin/env bash
# Builds `thinlab` with profile-guided optimisation (PGO). An instrumented build first runs a
# training set of what thinlab is used for (the benchmark workloads, the committed scenarios,
# many flows at once, capture analysis, what-if replays and every reproduction in its quick
# form); LLVM merges the counts, and the release build then uses them to decide what to
# inline and how to lay out the hot paths (every loop aligned to 64 bytes, so that the layout
# varies less from build to build). The simulator runs 10–20 % faster, and
# every result is byte-identical to a plain build's (docs/performance.md, "Profile-guided
# build").
#
# When LLVM's post-link optimiser BOLT is installed (Debian: apt-get install bolt-16), a fourth
# stage lays out the finished binary's code once more by where the same training spends its
# time: hot blocks together, cold ones split off. The thin stream simulates 7–8 % faster with
# it; the dumbbell and 10 000 flows are unchanged (docs/performance.md, "BOLT after PGO").
#
#   scripts/build-pgo.sh             # -> target/pgo/thinlab
#   scripts/build-pgo.sh --install   # and copies it to ~/.cargo/bin/thinlab (as cargo install)
#   BOLT=0 scripts/build-pgo.sh      # without the BOLT stage; BOLT=1 requires it
#
# Needs the compiler's own llvm-profdata: rustup's llvm-tools component, added when missing
# (exit status 3 when it cannot be had). Takes about twice a plain build: two release builds
# plus the training, one run at a time (2–4 min when rebuilding, about 5 from scratch; BOLT
# adds under a minute). BOLT is looked for as llvm-bolt and merge-fdata on PATH, then in
# /usr/lib/llvm-*/bin (the newest); BOLT_DIR names a directory that holds them.
# RUSTFLAGS are kept (CARGO_ENCODED_RUSTFLAGS is replaced); the build scripts and proc-macros
# are instrumented too, which changes nothing but their speed (their counts are left out of
# the profile).
set -euo pipefail

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build-pgo: %s\n' "$*" >&2; exit 1; }

install=0
for a in "$@"; do
    case "$a" in
        --install) install=1 ;;
        -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
# (one pair measured: docs/performance.md, "Loops aligned in the PGO build").
ALIGN="-Cllvm-args=-align-loops=64"

command -v cargo >/dev/null || die "cargo not found (install Rust from https://rustup.rs)"
host=$("$RUSTC" -vV | sed -n 's/^host: //p')
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

# BOLT: BOLT=1 requires it, BOLT=0 leaves it out, unset uses it when it is installed.
BOLT="${BOLT:-auto}"
case "$BOLT" in 0 | 1 | auto) ;; *) die "BOLT must be 0, 1 or unset, got '$BOLT'" ;; esac
find_bolt() {
    local d
    local on_path=""
    command -v llvm-bolt >/dev/null && on_path=$(dirname "$(command -v llvm-bolt)")
    for d in "${BOLT_DIR:-}" "$on_path" $(ls -d /usr/lib/llvm-*/bin 2>/dev/null | sort -V -r); do
        if [ -n "$d" ] && [ -x "$d/llvm-bolt" ] && [ -x "$d/merge-fdata" ]; then
            printf '%s' "$d"
            return 0
        fi
    done
    return 1
}
bolt_dir=""
if [ "$BOLT" != 0 ]; then
    if bolt_dir=$(find_bolt); then
        log "BOLT found in $bolt_dir"
    elif [ "$BOLT" = 1 ]; then
        die "BOLT=1, but no llvm-bolt with merge-fdata was found (Debian: apt-get install bolt-16; or set BOLT_DIR)"
    else
        log "no BOLT (llvm-bolt, merge-fdata) found: the PGO build without its stage (Debian: apt-get install bolt-16)"
    fi
fi
stages=3
[ -n "$bolt_dir" ] && stages=4

# The training set: what thinlab is used for, one run at a time (--jobs 1). With PGO's
# instrumentation the counters are plain increments, and two threads running the simulator (or
# a run's metrics) at once lose some of them at random, so that two profiles of the same
# training differed (docs/performance.md, "Profile-guided build"). Atomic counters would keep
# them, but made the training slower than running it on one thread.
# Each step returns on failure: `set -e` does not reach into a function called by `||`.
train() {
    local t="$1" out="$2" s many
    rm -rf "$out"
    mkdir -p "$out"
    "$t" run bench/thinlab/dumbbell.toml -q --jobs 1 --out "$out/dumbbell" --set duration=30s || return 1
    "$t" run bench/thinlab/thin_stream.toml -q --jobs 1 --out "$out/thin_stream" || return 1
    for s in scenarios/*.toml; do
        "$t" run "$s" -q --jobs 1 --out "$out/$(basename "$s" .toml)" || return 1
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
    "$t" run "$many" -q --jobs 1 --out "$out/many" || return 1
    "$t" analyze tests/data/kernel-140ms-sender.pcap \
        --receiver tests/data/kernel-140ms-receiver.pcap --out "$out/analyze" >/dev/null || return 1
    "$t" whatif tests/data/kernel-140ms-sender.pcap --jobs 1 \
        --receiver tests/data/kernel-140ms-receiver.pcap --out "$out/whatif" >/dev/null || return 1
    "$t" reproduce all --quick -q --jobs 1 --out "$out/reproduce" || return 1
    rm -rf "$out"
}

start=$(date +%s)
rm -rf "$WORK/thinlab"

log "1/$stages instrumented build (target/pgo/gen)"
CARGO_ENCODED_RUSTFLAGS="$(flags_with "$ALIGN" "-Cprofile-generate=$WORK/raw")" \
    cargo build --release --locked -p thinlab --target-dir "$WORK/gen"
# The build itself ran instrumented build scripts and proc macros (the flags reach them too), whose
# counts would join the profile: only when they ran (a fresh target/pgo/gen), shifting what the
# optimiser counts as hot from one build to the next. The profile is the training runs' alone.
rm -rf "$WORK/raw"
mkdir -p "$WORK/raw"

log "2/$stages training runs"
train "$WORK/gen/release/thinlab" "$WORK/train"
"$profdata" merge -o "$WORK/merged.profdata" "$WORK/raw"
rm -rf "$WORK/raw"

log "3/$stages optimised build (target/pgo/use)"
# BOLT moves code between functions only in a binary that kept its relocations.
relocs=()
[ -n "$bolt_dir" ] && relocs=("-Clink-arg=-Wl,--emit-relocs")
CARGO_ENCODED_RUSTFLAGS="$(flags_with "$ALIGN" "-Cprofile-use=$WORK/merged.profdata" "${relocs[@]}")" \
    cargo build --release --locked -p thinlab --target-dir "$WORK/use"
built="$WORK/use/release/thinlab"

# Stage 4: BOLT lays out $built once more by the training's profile, into $WORK/bolt/thinlab.
bolt_stage() {
    local bolt="$WORK/bolt"
    rm -rf "$bolt"
    mkdir -p "$bolt"
    # Each training process writes its own profile (file name + pid), merged afterwards.
    "$bolt_dir/llvm-bolt" "$built" -o "$bolt/thinlab-instrumented" -instrument \
        --instrumentation-file="$bolt/profile" --instrumentation-file-append-pid \
        >"$bolt/instrument.log" 2>&1 || { log "llvm-bolt -instrument failed: $bolt/instrument.log"; return 1; }
    train "$bolt/thinlab-instrumented" "$WORK/train" || { log "the instrumented training failed"; return 1; }
    "$bolt_dir/merge-fdata" "$bolt"/profile.*.fdata >"$bolt/merged.fdata" 2>"$bolt/merge.log" ||
        { log "merge-fdata failed: $bolt/merge.log"; return 1; }
    # Blocks ordered by how often one follows another (ext-tsp), functions by how often they
    # call each other (hfsort), cold blocks moved out of the hot functions; debug info kept.
    "$bolt_dir/llvm-bolt" "$built" -o "$bolt/thinlab" -data="$bolt/merged.fdata" \
        -reorder-blocks=ext-tsp -reorder-functions=hfsort -split-functions -split-all-cold \
        -split-eh -update-debug-sections >"$bolt/optimize.log" 2>&1 ||
        { log "llvm-bolt failed: $bolt/optimize.log"; return 1; }
    chmod 755 "$bolt/thinlab" # llvm-bolt writes its output with mode 777
    rm -f "$bolt"/profile.*.fdata "$bolt/thinlab-instrumented"
}
if [ -n "$bolt_dir" ]; then
    log "4/$stages BOLT: the same training through an instrumented copy, then the layout"
    if bolt_stage; then
        built="$WORK/bolt/thinlab"
    elif [ "$BOLT" = 1 ]; then
        die "the BOLT stage failed (BOLT=1)"
    else
        log "the BOLT stage failed: target/pgo/thinlab is the PGO build without it"
    fi
fi
cp "$built" "$WORK/thinlab.new"
mv "$WORK/thinlab.new" "$WORK/thinlab"
log "built target/pgo/thinlab in $(($(date +%s) - start)) s"

if [ "$install" = 1 ]; then
    dest="${CARGO_HOME:-$HOME/.cargo}/bin"
    mkdir -p "$dest"
    install -m 755 "$WORK/thinlab" "$dest/thinlab"
    log "installed $dest/thinlab"
fi
