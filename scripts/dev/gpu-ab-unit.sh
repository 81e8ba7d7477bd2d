#!/usr/bin/env bash
# Runs ON THE GPU MACHINE after scripts/dev/gpu-build.sh build: builds a second `tilekit` app whose one
# kernel unit is compiled with extra flags (an A/B of a compile-time variant inside one device call,
# without a second full build), and prints its path.
#
#   scripts/dev/gpu-ab-unit.sh <unit> "<flags>" <out-app>
#   e.g. scripts/dev/gpu-ab-unit.sh matmul_f32 "-DTILEKIT_SOME_VARIANT=0" /tmp/tk-A
#
# <unit>: a generated kernel unit of build/cuda (CMakeFiles/tilekit_kernels.dir/gen/<unit>.cpp.o).
# TILEKIT_AB_SOURCE_ROOT=<dir>: compile the unit against the headers of another tree (<dir> holds its
# tilekit/, e.g. `git archive <commit> tilekit`), an A/B
# against another commit whose change is inside inline device code (the unit's interface to the rest
# of the app must be the same).
# TILEKIT_AB_OBJECT=<file>: take this object for the unit instead of compiling one (e.g. compiled on
# the build machine by the unit's own command against another tree's headers, carried gzipped or
# not); <flags> is then ignored.
# The unit is compiled by its own ninja command plus <flags>, then the kernels archive and the app
# are re-made by their own commands, run by hand: `ninja tilekit` after swapping the object rebuilt
# it from source (ninja's log records the object), so every variant timed the same code (perf notes
# 19). build/cuda is restored afterwards (the unit's normal object, archive and app).
set -euo pipefail
cd "$(dirname "$0")/../../build/cuda"
unit=$1 flags=$2 out=$3
obj=CMakeFiles/tilekit_kernels.dir/gen/$unit.cpp.o
[ -f "$obj" ] || { echo "gpu-ab-unit: no $obj in build/cuda (run scripts/dev/gpu-build.sh build first)" >&2; exit 2; }
cmd=$(ninja -t commands "$obj" | tail -1)
if [ -n "${TILEKIT_AB_SOURCE_ROOT:-}" ]; then
  root=$(cd ../.. && pwd)
  [ -d "$TILEKIT_AB_SOURCE_ROOT/tilekit/kernels" ] ||
    { echo "gpu-ab-unit: no tilekit/kernels/ in $TILEKIT_AB_SOURCE_ROOT" >&2; exit 2; }
  cmd=${cmd//-I$root /-I$TILEKIT_AB_SOURCE_ROOT }
fi
# The cuda preset's build environment adds the sm_90a code (CMakePresets.json, NVCC_APPEND_FLAGS);
# a unit recompiled without it loses its Hopper kernels (they compile to nothing for sm_80).
export NVCC_APPEND_FLAGS=${NVCC_APPEND_FLAGS:-"-gencode arch=compute_90a,code=sm_90a"}
archive=$(ninja -t commands libtilekit_kernels.a | tail -1)
link=$(ninja -t commands tilekit | tail -1)
tmp=$(mktemp -d)
cp -p "$obj" "$tmp/normal.o"
cp -p libtilekit_kernels.a "$tmp/archive.normal"
cp -p tilekit "$tmp/tilekit.normal"
if [ -n "${TILEKIT_AB_OBJECT:-}" ]; then
  case $TILEKIT_AB_OBJECT in *.gz) gunzip -c "$TILEKIT_AB_OBJECT" > "$tmp/variant.o" ;; *) cp "$TILEKIT_AB_OBJECT" "$tmp/variant.o" ;; esac
else
  eval "${cmd/-o $obj/$flags -o $tmp/variant.o}"
fi
cp "$tmp/variant.o" "$obj"
eval "$archive" && eval "$link"
cp tilekit "$out"
# Restore the normal object, archive and app, bytes and times (ninja then has nothing to redo).
cp -p "$tmp/normal.o" "$obj"
cp -p "$tmp/archive.normal" libtilekit_kernels.a
cp -p "$tmp/tilekit.normal" tilekit
rm -rf "$tmp"
cmp -s "$out" tilekit && echo "gpu-ab-unit: warning: the variant app is identical to the normal one" >&2
echo "$out"
