#!/usr/bin/env bash
# The app's contract for bad input (README, "The app", exit statuses): a message naming the bad
# value and what is allowed; exit 2 for bad input, 4 for a problem too big for the machine's
# memory (or a cache that cannot be written), 1 for a failed check; never a crash, an uncaught
# exception or a hang. And --help exits 0; small validated runs exit 0.
#
# One table, one row per case:  expect <status> <text the output must contain> [VAR=value ...] -- args
# (a text starting with '!' must NOT appear). Every row runs under a time limit (60 s).
#
#   tests/cli_bad_input.sh [LAUNCHER...] APP   (LAUNCHER: e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu
#                                               for a cross-compiled app)
set -u
app=("$@")
fail=0; n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A tile from this backend's menu (the menus differ between host and GPU backends).
tile=$("${app[@]}" info 2>/dev/null | awk '/^matmul tiles/{print $3}' | tr -d ,)
# The Kokkos of the build (its options differ: 4.3 and later read --kokkos-num-threads only).
kokkos_version=$("${app[@]}" --version | sed -n 's/^Kokkos \([0-9.]*\),.*/\1/p')
kokkos_major=${kokkos_version%%.*}
thr=--kokkos-threads
[ "${kokkos_major:-3}" -ge 4 ] && thr=--kokkos-num-threads
expect() {  # expect <status> <text> [VAR=value ...] -- args...
  local want=$1 text=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out status found=1
  out=$(env ${envs[@]+"${envs[@]}"} timeout 60 "${app[@]}" "$@" 2>&1); status=$?
  n=$((n+1))
  if [ "${text:0:1}" = "!" ]; then
    grep -qF -- "${text:1}" <<<"$out" && found=0
  else
    grep -qF -- "$text" <<<"$out" || found=0
  fi
  if [ "$status" -ne "$want" ] || [ "$found" -eq 0 ]; then
    echo "FAIL: ${envs[*]} tilekit $* -> status $status (want $want), output ${text:0:1}= '$text':"; echo "$out" | head -5
    fail=$((fail+1))
  fi
}
expect 0 "Usage"                  -- --help
expect 0 "--epilogue"             -- matmul --help
expect 0 "backend"                -- info
expect 2 "subcommand"             --
expect 0 "!--kokkos-help"         -- --help
expect 0 "!--kokkos-help"         -- matmul --help
expect 2 "$thr"                 -- matmul 64 64 64 $thr=0
expect 2 "$thr"                 -- matmul 64 64 64 $thr=abc
expect 2 "$thr"                 -- matmul 64 64 64 $thr=-1
expect 2 "$thr"                 -- matmul 64 64 64 $thr=
expect 2 "--kokkos-numa"          -- info --kokkos-numa=1e3
expect 2 "--kokkos-device-id"     -- info --kokkos-device-id=-2
expect 0 "PASS"                   -- matmul 33 17 9 --check --reps 1 --warmup 0 $thr=1
expect 2 "M"                      -- matmul
expect 2 "abc"                    -- matmul abc 4 4
expect 2 "-3"                     -- matmul -3 4 4
expect 2 "99999999999999999999"   -- matmul 99999999999999999999 4 4
expect 2 "1e3"                    -- matmul 1e3 4 4
expect 2 "too large"              -- matmul 4000000 4000000 4
expect 2 "f128"                   -- matmul 4 4 4 --dtype f128
expect 2 "unsupported type pair"          -- matmul 4 4 4 --dtype f32 --out-dtype f16
expect 2 "tanh"                   -- matmul 4 4 4 --epilogue tanh
expect 2 "bm7"                    -- matmul 4 4 4 --config bm7
expect 2 "not in the"             -- matmul 4 4 4 --config bm48_bn48_bk8_tm4_tn4
expect 2 "team_size"              -- matmul 4 4 4 --config ${tile}_t2000
expect 2 "vector_length"          -- matmul 4 4 4 --config ${tile}_v3
expect 2 "gelu"                   -- matmul 4 4 4 --dtype i8 --epilogue gelu
expect 2 "--math"                 -- matmul 4 4 4 --math fp19
expect 2 "applies to --dtype f32 only (got --dtype f64)" -- matmul 4 4 4 --dtype f64 --math tf32
expect 2 "applies to --dtype f32 only (got --dtype i8)" -- tune matmul --sizes 16 --dtype i8 --math tf32
expect 2 "for elementwise (allowed: exhaustive, random, listed)" -- tune elementwise --strategy model
if [ "$("${app[@]}" info 2>/dev/null | sed -n 's/^backend *//p')" = cuda ]; then
  expect 0 "strategy model" -- tune matmul --sizes 96 --strategy model --reps 7 --warmup 1 --cache "$(mktemp -d)"
else
  expect 2 "ranks the GPU tiles" -- tune matmul --sizes 16 --strategy model
fi
expect 0 '"pass": true'           -- matmul 33 17 45 --math tf32 --layout-a col --beta 1 --check --json --reps 1
expect 2 "integers"               -- matmul 4 4 4 --dtype i8 --alpha 0.5
expect 2 "diagonal"               -- matmul 4 4 4 --layout-a diagonal
expect 2 "lda"                    -- matmul 4 4 4 --lda 2
expect 2 "reps"                   -- matmul 4 4 4 --reps 0
expect 0 "PASS"                   -- matmul 33 17 9 --check --reps 1 --warmup 0
expect 0 "PASS"                   -- matmul 0 0 0 --check --reps 1 --warmup 0
expect 0 '"pass": true'           -- matmul 20 30 40 --dtype bf16 --trans-a --layout-b col --epilogue bias+silu --beta 1 --check --json --reps 1
# elementwise
expect 0 "--last-shape"           -- elementwise --help
expect 2 "N"                      -- elementwise 4
expect 2 "-3"                     -- elementwise -3 4
expect 2 "x7"                     -- elementwise 4 x7
expect 2 "2.5"                    -- elementwise 2.5 4
expect 2 "too large"              -- elementwise 4000000 4000000
expect 2 "unknown --op 'pow'"     -- elementwise 4 4 --op pow
expect 2 "unknown --dtype 'f8'"   -- elementwise 4 4 --dtype f8
expect 2 "unknown --dtype 'i8'"   -- elementwise 4 4 --dtype i8
expect 2 "unknown --variant"      -- elementwise 4 4 --variant blocked
expect 2 "takes 1 input (got --inputs 2)" -- elementwise 4 4 --op relu --inputs 2
expect 2 "takes 2 inputs (got --inputs 3)" -- elementwise 4 4 --op add --inputs 3
expect 2 "shape mismatch"         -- elementwise 4 5 --last-shape 3x5
expect 2 "3x5"                    -- elementwise 4 5 --last-shape 3x5
expect 2 "not a shape"            -- elementwise 4 5 --last-shape 4by5
expect 2 "floating-point"         -- elementwise 4 4 --op silu --dtype i32
expect 2 "whole-number"           -- elementwise 4 4 --op axpby --dtype i32 --alpha 0.5
expect 2 "ld"                     -- elementwise 4 5 --ld 3
expect 2 "vector_bytes"           -- elementwise 4 4 --config vectorized_vb8
expect 2 "threads_n"              -- elementwise 4 4 --config tiled_t4_n3
expect 2 "malformed"              -- elementwise 4 4 --config tiled_q3
expect 0 "PASS"                   -- elementwise 33 17 --op add --dtype f16 --variant tiled --check --reps 1 --warmup 0
expect 0 "PASS"                   -- elementwise 0 5 --check --reps 1 --warmup 0
expect 0 '"pass": true'           -- elementwise 19 37 --op fma --dtype bf16 --layout col --ld 40 --last-shape 1x37 --check --json --reps 1
expect 0 '"pass": true'           -- elementwise 9 13 --op silu --dtype f32 --variant vectorized --check --json --reps 1
# tune: the tie tolerance is a fraction; merge with no unfinished sweep says so and exits 0.
tune_dir=$(mktemp -d)
expect 2 "--tie-tolerance"        -- tune matmul --tie-tolerance 2 --cache "$tune_dir"
expect 0 "no unfinished sweep"    -- tune merge --cache "$tune_dir"
rm -rf "$tune_dir"

# --- Unknown commands: named, with the allowed ones
expect 2 "unknown command 'mtamul'"        -- mtamul 4 4 4
expect 2 "allowed: matmul, elementwise, tune, info" -- mtamul
expect 2 "unknown tune command 'gemm'"     -- tune gemm
expect 2 "--threads"                       -- matmul 4 4 4 --threads=0

# --- Values that parse but make no sense
expect 2 "'nan' is not a number"           -- matmul 4 4 4 --alpha nan
expect 2 "'inf' is not a number"           -- matmul 4 4 4 --beta inf
expect 2 "'-inf' is not a number"          -- matmul 4 4 4 --beta -inf
expect 2 "'' is not a number"              -- matmul 4 4 4 --alpha ""
expect 2 "'0x10' is not a number"          -- matmul 4 4 4 --alpha 0x10
expect 2 "'1e999' is not a number"         -- matmul 4 4 4 --alpha 1e999
expect 2 "does not fit i8 inputs"          -- matmul 4 4 4 --dtype i8 --alpha 3000000000
expect 2 "does not fit i8 inputs"          -- matmul 4 4 4 --dtype i8 --beta -2147483649
expect 0 "PASS"                            -- matmul 4 4 4 --dtype i8 --alpha -1000 --check --reps 1 --warmup 0
expect 2 "'-1' is not a seed"              -- matmul 4 4 4 --seed -1
expect 2 "'1.5' is not a seed"             -- elementwise 4 4 --seed 1.5
expect 2 "'18446744073709551616' is not a seed" -- matmul 4 4 4 --seed 18446744073709551616
expect 2 "'2.5' is not a repetition count" -- matmul 4 4 4 --reps 2.5
expect 2 "'' is not a repetition count"    -- elementwise 4 4 --reps ""
expect 2 "'nan' is not a number"           -- elementwise 4 4 --op axpby --alpha nan
expect 2 "'5' is not an input count"       -- elementwise 4 4 --inputs 5
expect 2 "'-1' is not a buffer-set count"  -- elementwise 4 4 --buffers -1
expect 2 "'nan' is not a number"           -- tune matmul --sizes 16 --seconds nan
expect 2 "'-1' is out of range"            -- tune elementwise --sizes 16 --seconds -1
expect 2 "'-3' is not a seed"              -- tune matmul --sizes 16 --seed -3
expect 2 "'0' is not a size"               -- tune matmul --sizes 0
expect 2 "'16x0x16' is not a size"         -- tune matmul --sizes 16x0x16
expect 2 "'0:64:16' is not a range"        -- tune matmul --sizes 0:64:16
expect 2 "'64:16:16' is not a range"       -- tune matmul --sizes 64:16:16
expect 2 "'16x16' is not a size"           -- tune matmul --sizes 16x16
expect 2 "'' is not a size"                -- tune matmul --sizes 16,,32
expect 2 "'0x16' is not a size"            -- tune elementwise --sizes 0x16
expect 2 "needs a floating-point accumulator" -- tune matmul --sizes 16 --dtype i8 --epilogue gelu
expect 2 "needs a floating-point accumulator" -- tune matmul --sizes 16 --dtype i8 --epilogue bias+silu

# --- Messages that say what is allowed, not a type's range
expect 2 "'-1' is not a leading dimension" -- matmul 4 4 4 --lda -1
expect 2 "!1.79769"                        -- matmul 4 4 4 --ldc -1
expect 2 "'abc' is not a leading dimension" -- elementwise 4 4 --ld abc
expect 2 "'4by5' is not a shape"           -- elementwise 4 5 --last-shape 4by5
expect 2 "'x5' is not a shape"             -- elementwise 4 5 --last-shape x5
expect 2 "too large"                       -- elementwise 4 5 --last-shape 2000000x2000000

# --- Memory: sized before allocating; refused with exit 4 and both numbers, quickly
expect 4 "not enough memory"               -- matmul 200000 200000 200000
expect 4 "available in"                    -- matmul 200000 200000 200000 --dtype f64 --check
expect 4 "needs 640.00 GB"                 -- matmul 200000 200000 200000
expect 4 "not enough memory"               -- elementwise 1000000 1000000
expect 4 "not enough memory"               -- tune matmul --sizes 120000 --out "$tmp/big"
expect 4 "not enough memory"               -- tune elementwise --sizes 100000x100000 --out "$tmp/big"

# --- Report and cache directories
expect 2 "--out '/proc/tilekit-report'"    -- tune matmul --sizes 16 --out /proc/tilekit-report
expect 2 "give a directory you can write"  -- tune elementwise --sizes 16 --out /proc/tilekit-report
expect 2 "cannot be used as a directory"   -- tune matmul --sizes 16 --out /dev/null/x

# The cache: a sweep with an unwritable cache measures, reports, says where the results are (exit 4)
q=(--budget 1 --no-baselines -q)
expect 4 "could not be stored in the tuning cache" -- tune matmul --sizes 16 "${q[@]}" --cache /proc/tilekit-cache --out "$tmp/r0"
[ -s "$tmp/r0/candidates.json" ] || { echo "FAIL: no report after a sweep with an unwritable cache"; fail=$((fail+1)); }
expect 4 "measuring anyway"                -- tune elementwise --sizes 16 --budget 1 -q --cache /proc/tilekit-cache --out "$tmp/r0"
# Two machines' sweeps merged; an unusable entry (48) falls back to the nearest tuned shape (64), or on
# CUDA, where only an exact entry counts, to the model's pick
expect 0 "best configs stored"             -- tune matmul --sizes 64 "${q[@]}" --cache "$tmp/c64" --out "$tmp/r1"
expect 0 "best configs stored"             -- tune matmul --sizes 48 "${q[@]}" --cache "$tmp/c48" --out "$tmp/r2"
c48=$(ls "$tmp"/c48/*.json)
sed -i 's/"config": "[^"]*"/"config": "bm7_bn7_bk7_tm1_tn1"/' "$c48"
mkdir -p "$tmp/merged"
expect 0 "2 entries"                       -- tune merge "$tmp"/c64/*.json "$tmp"/c48/*.json --out "$tmp/merged/$(basename "$tmp"/c48/*.json)"
fallback="(nearest)"
[ "$("${app[@]}" info 2>/dev/null | sed -n 's/^backend *//p')" = cuda ] && fallback="(model)"
expect 0 "$fallback"                       TILEKIT_TUNING_DIR="$tmp/merged" -- matmul 48 48 48 --reps 1 --warmup 0 --check -v
expect 0 "not usable"                      TILEKIT_TUNING_DIR="$tmp/merged" -- matmul 48 48 48 --reps 1 --warmup 0 -v
expect 2 "cannot be merged"                -- tune merge /etc/hostname --out "$tmp/m2.json"
expect 2 "go together"                     -- tune merge --out "$tmp/m2.json"
# A cached elementwise config that parses but does not fit falls back instead of failing
expect 0 "best configs stored"             -- tune elementwise --sizes 16x16 --budget 1 -q --cache "$tmp/e" --out "$tmp/r3"
sed -i 's/"config": "[^"]*"/"config": "tiled_t4_n3"/' "$tmp"/e/*.json
expect 0 "not usable"                      TILEKIT_TUNING_DIR="$tmp/e" -- elementwise 16 16 --check --reps 1 --warmup 0 -v
expect 0 "PASS"                            TILEKIT_TUNING_DIR="$tmp/e" -- elementwise 16 16 --check --reps 1 --warmup 0
# A corrupt cache is reported without -v, in words (no JSON-library text), and set aside
for f in "$tmp"/c64/*.json; do printf '{ "format": 1, "entr' > "$f"; done
expect 0 "is corrupt (not valid JSON)"     TILEKIT_TUNING_DIR="$tmp/c64" -- matmul 16 16 16 --reps 1 --warmup 0
ls "$tmp"/c64/*.corrupt-* >/dev/null 2>&1 || { echo "FAIL: the corrupt cache was not set aside"; fail=$((fail+1)); }
printf '{"format": 1, "tilekit_version": "0.2.0", "device": 3, "entries": []}' > "$c48"
expect 0 "field 'device' has the wrong type" TILEKIT_TUNING_DIR="$tmp/c48" -- matmul 16 16 16 --reps 1 --warmup 0
printf '{"format": 1, "tilekit_version": "0.2.0", "device": {}, "entries": [}' > "$c48"
expect 0 "!parse_error"                    TILEKIT_TUNING_DIR="$tmp/c48" -- matmul 16 16 16 --reps 1 --warmup 0

# ============================================================================================
# Tables by class: each row is one bad input and the text its message must name.
# A class's rows run through `table CLASS STATUS`, which counts them per class for the summary.
declare -A per_class=()
table() {  # table <class> <status>; then rows on stdin: <text> <TAB> <args...> (VAR=value words first)
  local class=$1 want=$2 text args before
  while IFS=$'\t' read -r text args; do
    [ -z "$text" ] && continue
    before=$fail
    eval "local words=($args)"
    local envs=() rest=()
    for w in "${words[@]}"; do
      if [ ${#rest[@]} -eq 0 ] && [[ $w =~ ^[A-Z_]+= ]]; then envs+=("$w"); else rest+=("$w"); fi
    done
    expect "$want" "$text" ${envs[@]+"${envs[@]}"} -- "${rest[@]}"
    per_class[$class]=$(( ${per_class[$class]:-0} + 1 ))
  done
}
# The host thread pool's limit: OpenMP's 512; Serial runs one thread; GPU builds accept the host
# pool's 512 (their concurrency is the device's, so the accepted limit is not shown there).
backend=$("${app[@]}" info 2>/dev/null | sed -n 's/^backend *//p')
max_threads=512
[ "$backend" = serial ] && max_threads=1

# --- Kokkos' own options and variables, checked before Kokkos sees them (exit 2, never 5 or a crash)
table kokkos-options 2 <<ROWS
$thr needs a value	info $thr
write '$thr=2'	info $thr 2
'$thr=600'	info $thr=600
'$thr=1000'	info $thr=1000
'$thr=4096'	info $thr=4096
at most $max_threads	info $thr=$((max_threads + 1))
'$thr=0'	info $thr=0
'$thr=2.5'	info $thr=2.5
'$thr=99999999999'	info $thr=99999999999
'$thr= 2'	info '$thr= 2'
'--kokkos-device-id=abc'	info --kokkos-device-id=abc
unknown Kokkos option '--kokkos-foo=bar'	info --kokkos-foo=bar
allowed: $thr	matmul 4 4 4 --kokkos-thread=2
unknown Kokkos option '--kokkos-'	info --kokkos-
'--kokkos-device'	info --kokkos-device=0
'--kokkos-ndevices'	info --kokkos-ndevices=1
--kokkos-map-device-id-by	info --kokkos-map-device-id-by=foo
--kokkos-print-configuration	info --kokkos-print-configuration=maybe
cannot be loaded (no such file)	info --kokkos-tools-library=/nonexistent.so
cannot be loaded (not a shared library	info --kokkos-tools-library=/etc/hostname
names no library	info --kokkos-tools-library=
KOKKOS_NUM_THREADS='abc'	KOKKOS_NUM_THREADS=abc info
KOKKOS_NUM_THREADS=''	KOKKOS_NUM_THREADS= info
KOKKOS_NUM_THREADS='600'	KOKKOS_NUM_THREADS=600 info
KOKKOS_NUM_THREADS='2'	KOKKOS_NUM_THREADS=2 info $thr=1
KOKKOS_DEVICE_ID='x'	KOKKOS_DEVICE_ID=x info
KOKKOS_PROFILE_LIBRARY='/nonexistent.so'	KOKKOS_PROFILE_LIBRARY=/nonexistent.so info
KOKKOS_DISABLE_WARNINGS='perhaps'	KOKKOS_DISABLE_WARNINGS=perhaps info
KOKKOS_TUNE_INTERNALS='0'	KOKKOS_TUNE_INTERNALS=0 info --kokkos-tune-internals
ROWS
if [ "${kokkos_major:-3}" -lt 4 ]; then  # options and variables of Kokkos 3 (flags take no value there)
table kokkos-options 2 <<ROWS
'--kokkos-numa=0'	info --kokkos-numa=0
'--kokkos-num-devices=abc'	info --kokkos-num-devices=abc
'--kokkos-num-devices=,'	info --kokkos-num-devices=,
--kokkos-num-devices needs a value	info --kokkos-num-devices
'--kokkos-disable-warnings=yes'	info --kokkos-disable-warnings=yes
given twice with different values	info --kokkos-numa=1 --kokkos-numa=2
KOKKOS_NUMA='-1'	KOKKOS_NUMA=-1 info
KOKKOS_NUM_DEVICES='abc'	KOKKOS_NUM_DEVICES=abc info
KOKKOS_RAND_DEVICES='0'	KOKKOS_RAND_DEVICES=0 info
ROWS
else  # Kokkos 4.3 and later no longer read these: refused, naming what to use
table kokkos-options 2 <<ROWS
'--kokkos-threads' is not taken by the Kokkos $kokkos_major	info --kokkos-threads=2
(use --kokkos-num-threads)	matmul 4 4 4 --kokkos-threads=1
'--kokkos-numa' is not taken	info --kokkos-numa=0
'--kokkos-num-devices' is not taken	info --kokkos-num-devices=1
given twice with different values	info --kokkos-map-device-id-by=random --kokkos-map-device-id-by=mpi_rank
'--kokkos-disable-warnings=perhaps'	info --kokkos-disable-warnings=perhaps
ROWS
fi
if [ "$backend" = openmp ]; then
table kokkos-options 2 <<ROWS
OMP_NUM_THREADS='600'	OMP_NUM_THREADS=600 info
OMP_NUM_THREADS='513,2'	OMP_NUM_THREADS=513,2 info
ROWS
fi
# ...and what Kokkos takes runs (the limit itself included)
case $backend in
  cuda|hip) expect 0 "backend"    -- info $thr=$max_threads ;;
  *) expect 0 "concurrency      $max_threads" -- info $thr=$max_threads ;;
esac
expect 0 "PASS"                   KOKKOS_NUM_THREADS=1 -- matmul 9 9 9 --check --reps 1 $thr=1
expect 0 "backend"                -- info --kokkos-disable-warnings --kokkos-tools-args=x
expect 0 "Kokkos $kokkos_version, Kokkos Kernels" -- --version
expect 0 "backend"                -- -V
expect 0 "Kokkos Kernels"         -- $thr=1 --version

# --- Options before the command, and values that are another option's name
table command-line 2 <<'ROWS'
'--foo' before the command	--foo
'--json' before the command	--json info
tilekit itself takes only --help and --version	-x matmul 4 4 4
'--reps' looks like an option	matmul 4 4 4 --dtype --reps 2
'--json' looks like an option	elementwise 4 4 --op --json
'--dtype' looks like an option	tune matmul --sizes --dtype f32
'--frob' looks like an option	tune merge /etc/hostname --out --frob
'--x' looks like an option	tune elementwise --cache --x
'banana' is not a value of --trans-a	matmul 4 4 4 --trans-a=banana
allowed: --trans-b alone	matmul 4 4 4 --trans-b=2
ROWS

# --- Empty strings: refused, never silently the default
table empty-values 2 <<'ROWS'
--out-dtype: an empty value is not allowed	matmul 4 4 4 --out-dtype ""
--dtype: an empty value is not allowed	matmul 4 4 4 --dtype ""
--epilogue: an empty value	matmul 4 4 4 --epilogue ""
--config: an empty value	matmul 4 4 4 --config ""
--last-shape: an empty value	elementwise 4 4 --last-shape ""
--config: an empty value	elementwise 4 4 --config ""
--op: an empty value	elementwise 4 4 --op ""
--variant: an empty value	elementwise 4 4 --variant ""
--out: an empty path	tune matmul --sizes 16 --out ""
--cache: an empty path	tune matmul --sizes 16 --cache ""
--out-dtype: an empty value	tune matmul --sizes 16 --out-dtype ""
--sizes: an empty value	tune elementwise --sizes ""
--cache: an empty path	tune elementwise --cache ""
--out: an empty path	tune merge /etc/hostname --out ""
--cache: an empty path	tune merge --cache ""
ROWS

# --- Values that parse but are not allowed; checks made before a sweep, not after it
table bad-values 2 <<'ROWS'
'nan' is not a number (allowed: a finite number from 0 to 1)	tune matmul --sizes 16 --tie-tolerance nan
'inf' is not a number	tune matmul --sizes 16 --tie-tolerance inf
'-0.5' is out of range	tune matmul --sizes 16 --tie-tolerance -0.5
op 'silu' needs a floating-point type (got --dtype i32	tune elementwise --op silu --dtype i32 --sizes 16
allowed: f64, f32, f16, bf16)	tune elementwise --op silu --dtype i32 --sizes 8x8,16
allowed activations: none, relu, each with or without a bias (epilogues none, bias, relu, bias+relu)	matmul 4 4 4 --dtype i8 --epilogue silu
epilogues none, bias, relu, bias+relu	matmul 4 4 4 --dtype i8 --epilogue bias+gelu
ROWS
expect 0 "PASS" -- matmul 9 9 9 --dtype i8 --epilogue bias+relu --check --reps 1
expect 0 "PASS" -- matmul 9 9 9 --dtype i8 --epilogue bias --check --reps 1

# --- The host micro-kernel path: TILEKIT_HOST_ISA checked, a forced path taken (host backends)
if [ "$backend" = openmp ] || [ "$backend" = serial ]; then
  expect 2 "TILEKIT_HOST_ISA='banana' is not a host path (allowed: portable" TILEKIT_HOST_ISA=banana -- matmul 4 4 4
  expect 0 "chosen by TILEKIT_HOST_ISA" TILEKIT_HOST_ISA=portable -- info
  expect 0 "PASS"                   TILEKIT_HOST_ISA=portable -- matmul 33 17 300 --dtype i8 --check --reps 1
fi

# --- tune merge: files that are not cache files, in words, and never a hang
mkfifo "$tmp/fifo.json"
mkdir -p "$tmp/adir"
expect 0 "best configs stored"             -- tune matmul --sizes 16 "${q[@]}" --cache "$tmp/cm" --out "$tmp/rm"
cm=$(ls "$tmp"/cm/*.json)
table merge-files 2 <<ROWS
is a FIFO (named pipe), not a regular file	tune merge $tmp/fifo.json --out $tmp/m3.json
is a directory, not a file	tune merge $tmp/adir --out $tmp/m3.json
it is not a regular file	tune merge /dev/zero --out $tmp/m3.json
there is no such file	tune merge $tmp/none.json --out $tmp/m3.json
is a file, not a directory	tune merge --cache $cm
exists and is not a regular file	tune merge $cm --out $tmp/adir
exists and is not a regular file	tune merge $cm --out $tmp/fifo.json
--out '/proc' is not writable: the file system there does not take new files	tune merge $cm --out /proc/x.json
ROWS
[ -e ./--frob ] && { echo "FAIL: tune merge wrote a file named --frob"; fail=$((fail+1)); rm -f ./--frob; }
# A FIFO, or a directory, where the cache file should be: not used, said, no hang
fifo_dir=$tmp/fifo-cache; mkdir -p "$fifo_dir"; mkfifo "$fifo_dir/$(basename "$cm")"
expect 0 "is a FIFO (named pipe)"          TILEKIT_TUNING_DIR="$fifo_dir" -- matmul 16 16 16 --reps 1 --warmup 0
expect 4 "could not be stored"             -- tune matmul --sizes 16 "${q[@]}" --cache "$fifo_dir" --out "$tmp/rf"
per_class[merge-files]=$(( ${per_class[merge-files]} + 2 ))

# --- Results: an output that overflowed its type is said to be one, with the way out (status 1)
table overflow 1 <<'ROWS'
elements of C overflowed f16 (largest finite 65504)	matmul 1 1 1 --dtype f16 --alpha 1e6 --check --reps 1
use --out-dtype f32	matmul 8 8 8 --dtype f16 --alpha 1e6 --check --reps 1
OVERFLOW	matmul 8 8 8 --dtype f16 --alpha 1e6 --check --reps 1
elements of C overflowed bf16	matmul 64 64 64 --dtype bf16 --alpha 3e38 --check --reps 1
use --dtype f64	matmul 64 64 64 --dtype f32 --alpha 3e38 --check --reps 1
ROWS
expect 0 "PASS"                            -- matmul 8 8 8 --dtype f16 --out-dtype f32 --alpha 1e6 --check --reps 1

# --- Thread binding: with none set, the app binds (OpenMP) and Kokkos prints no warning; -v says so.
# The app binds by starting itself again (/proc/self/exe), which an app run by a launcher cannot do
# (qemu-user without binfmt_misc: the host kernel cannot execute the target binary).
if [ ${#app[@]} -eq 1 ]; then
  expect 0 "!OMP_PROC_BIND environment variable not set" -u OMP_PROC_BIND -u OMP_PLACES -- info
  expect 0 "!WARNING"                -u OMP_PROC_BIND -u OMP_PLACES -- matmul 16 16 16 --reps 1 --check
  [ "$backend" = openmp ] &&
    expect 0 "bound with OMP_PROC_BIND=spread OMP_PLACES=threads (chosen by tilekit" -u OMP_PROC_BIND -u OMP_PLACES -- matmul 16 16 16 --reps 1 -v
else
  echo "cli_bad_input: under ${app[*]:0:${#app[@]}-1}: the rows of the app's own thread binding are not run"
fi
if [ "$backend" = openmp ]; then
  expect 0 "!chosen by tilekit"    OMP_PROC_BIND=false -- matmul 16 16 16 --reps 1 -v
  expect 0 "!chosen by tilekit"    -u OMP_PROC_BIND OMP_PLACES=cores -- elementwise 16 16 --reps 1 -v
fi

# --- More hardware threads than Kokkos' OpenMP pool holds (TILEKIT_TEST_HARDWARE_THREADS plays the
# machine) and no thread count chosen: the app gives Kokkos the pool's size and says so under -v,
# instead of a crash; a chosen count, or a machine within the pool, is left alone
if [ "$backend" = openmp ]; then
  nocount=(-u OMP_NUM_THREADS -u KOKKOS_NUM_THREADS)
  expect 0 "threads   $max_threads (chosen by tilekit: this machine offers 600 hardware threads" "${nocount[@]}" TILEKIT_TEST_HARDWARE_THREADS=600 -- elementwise 16 16 --reps 1 -v
  expect 0 "concurrency      $max_threads" "${nocount[@]}" TILEKIT_TEST_HARDWARE_THREADS=1024 -- info
  expect 0 "!hardware threads" "${nocount[@]}" TILEKIT_TEST_HARDWARE_THREADS=64 -- elementwise 16 16 --reps 1 -v
  expect 0 "!hardware threads" -u KOKKOS_NUM_THREADS OMP_NUM_THREADS=2 TILEKIT_TEST_HARDWARE_THREADS=600 -- elementwise 16 16 --reps 1 -v
fi

summary=""
for c in "${!per_class[@]}"; do summary+=" $c=${per_class[$c]}"; done
echo "cli_bad_input: bad inputs by class:$summary"
echo "cli_bad_input: $((n-fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
