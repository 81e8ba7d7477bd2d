#!/usr/bin/env bash
# The app's contract for bad input (README, "The app", exit statuses): a message naming the bad
# value and what is allowed; exit 2 for bad input, 4 for a problem too big for the machine's
# memory (or a cache that cannot be written), 1 for a failed check; never a crash, an uncaught
# exception or a hang. And --help exits 0; small validated runs exit 0.
#
# One table, one row per case:  expect <status> <text the output must contain> [VAR=value ...] -- args
# (a text starting with '!' must NOT appear). Every row runs under a time limit (60 s).
set -u
app=$1
fail=0; n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A tile from this backend's menu (the menus differ between host and GPU backends).
tile=$("$app" info 2>/dev/null | awk '/^matmul tiles/{print $3}' | tr -d ,)
expect() {  # expect <status> <text> [VAR=value ...] -- args...
  local want=$1 text=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out status found=1
  out=$(env ${envs[@]+"${envs[@]}"} timeout 60 "$app" "$@" 2>&1); status=$?
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
expect 2 "--kokkos-threads"       -- matmul 64 64 64 --kokkos-threads=0
expect 2 "--kokkos-threads"       -- matmul 64 64 64 --kokkos-threads=abc
expect 2 "--kokkos-threads"       -- matmul 64 64 64 --kokkos-threads=-1
expect 2 "--kokkos-threads"       -- matmul 64 64 64 --kokkos-threads=
expect 2 "--kokkos-numa"          -- info --kokkos-numa=1e3
expect 2 "--kokkos-device-id"     -- info --kokkos-device-id=-2
expect 0 "PASS"                   -- matmul 33 17 9 --check --reps 1 --warmup 0 --kokkos-threads=1
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
# Two machines' sweeps merged; an unusable entry (48) falls back to the nearest tuned shape (64)
expect 0 "best configs stored"             -- tune matmul --sizes 64 "${q[@]}" --cache "$tmp/c64" --out "$tmp/r1"
expect 0 "best configs stored"             -- tune matmul --sizes 48 "${q[@]}" --cache "$tmp/c48" --out "$tmp/r2"
c48=$(ls "$tmp"/c48/*.json)
sed -i 's/"config": "[^"]*"/"config": "bm7_bn7_bk7_tm1_tn1"/' "$c48"
mkdir -p "$tmp/merged"
expect 0 "2 entries"                       -- tune merge "$tmp"/c64/*.json "$tmp"/c48/*.json --out "$tmp/merged/$(basename "$tmp"/c48/*.json)"
expect 0 "(nearest)"                       TILEKIT_TUNING_DIR="$tmp/merged" -- matmul 48 48 48 --reps 1 --warmup 0 --check -v
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

echo "cli_bad_input: $((n-fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
