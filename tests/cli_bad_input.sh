#!/usr/bin/env bash
# The app's contract for bad input: a message naming the bad value and what is allowed, exit 2,
# never a crash. And --help exits 0; a small validated run exits 0.
set -u
app=$1
fail=0; n=0
# A tile from this backend's menu (the menus differ between host and GPU backends).
tile=$("$app" info 2>/dev/null | awk '/^matmul tiles/{print $3}' | tr -d ,)
expect() {  # expect <status> <text that the output must contain> -- args...
  local want=$1 text=$2; shift 3
  local out status
  out=$("$app" "$@" 2>&1); status=$?
  n=$((n+1))
  if [ "$status" -ne "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: tilekit $* -> status $status (want $want), output lacks '$text':"; echo "$out" | head -5
    fail=$((fail+1))
  fi
}
expect 0 "Usage"                  -- --help
expect 0 "--epilogue"             -- matmul --help
expect 0 "backend"                -- info
expect 2 "subcommand"             --
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
echo "cli_bad_input: $((n-fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
