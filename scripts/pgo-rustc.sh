#!/bin/sh
# The compiler wrapper of scripts/build-pgo.sh. Cargo runs it (as RUSTC_WORKSPACE_WRAPPER) for
# thinlab's own crates only, so that the dependencies are compiled once for both of the
# script's builds. It adds the build's profile flag, THINLAB_PGO_FLAG (-Cprofile-generate=DIR
# or -Cprofile-use=FILE), to every crate it compiles but build scripts, and notes the crate's
# name in the file THINLAB_PGO_LOG.
#   usage (by cargo): pgo-rustc.sh RUSTC ARGS...
rustc=$1
shift
name=$(printf '%s\n' "$@" | sed -n '/^--crate-name$/{n;p;q;}')
case "$name" in
"" | ___ | build_script_*) exec "$rustc" "$@" ;; # cargo's queries, build scripts
esac
if [ -n "${THINLAB_PGO_LOG:-}" ]; then printf '%s\n' "$name" >>"$THINLAB_PGO_LOG"; fi
exec "$rustc" "$@" ${THINLAB_PGO_FLAG:+"$THINLAB_PGO_FLAG"}
