#!/usr/bin/env bash
# The README's "Library use" section shows the consumer project of examples/ verbatim (CI builds and
# runs that project against the installed package, so the README's code is compile-tested).
set -u
root=$1
readme=$(cat "$root/README.md")
fail=0
for f in examples/CMakeLists.txt examples/gemm_example.cpp; do
  text=$(cat "$root/$f")
  if [[ "$readme" != *"$text"* ]]; then
    echo "FAIL: README.md does not show $f as it is; copy it into the Library use section"
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "README shows examples/ verbatim"
exit "$fail"
