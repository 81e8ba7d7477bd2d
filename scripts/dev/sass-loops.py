#!/usr/bin/env python3
"""Lists the loops of one kernel's SASS (the text `nvdisasm -c` or `cuobjdump -sass` prints) with their
instruction mix, and for loops of FFMAs how many FFMAs read two non-reuse-cached source registers of
the same number parity (a register-bank conflict if the banks are two, by register number mod 2, as
measured on Volta; perf notes 22 counts the SIMT micro-kernel with it).

usage: scripts/dev/sass-loops.py KERNEL.sass [MIN_LOOP_INSTRUCTIONS]   (default 20)
"""
import collections
import re
import sys

if len(sys.argv) not in (2, 3):
    sys.exit(__doc__)
min_len = int(sys.argv[2]) if len(sys.argv) == 3 else 20
ins, labels = [], {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\.L_x_\d+):", line)
    if m:
        labels[m.group(1)] = len(ins)
        continue
    m = re.search(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;", line)
    if m:
        ins.append(m.group(2))
print(f"{len(ins)} instructions")
for end, text in enumerate(ins):
    m = re.search(r"BRA.*`\((\.L_x_\d+)\)", text)
    if not m or labels.get(m.group(1), len(ins)) > end:
        continue  # not a backward branch
    start = labels[m.group(1)]
    body = ins[start:end + 1]
    if len(body) < min_len:
        continue
    mix = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", x).split()[0].split(".")[0] for x in body)
    ffma = [x for x in body if x.startswith("FFMA")]
    same_parity = 0
    for x in ffma:
        sources = [int(r) for r, reuse in re.findall(r"R(\d+)(\.reuse)?", x)[1:] if not reuse]
        parities = [r % 2 for r in sources]
        same_parity += len(parities) != len(set(parities))
    extra = f"; FFMA with same-parity sources: {same_parity} of {len(ffma)}" if ffma else ""
    print(f"loop {start}-{end} ({len(body)} instructions): {dict(mix.most_common(10))}{extra}")
