#!/usr/bin/env python3
"""Summarises ws-kernel tile traces (branch ws-trace, TILEKIT_WS_TRACE=FILE; these files xz-compressed).

A trace: int64 tiles, int64 slots, then tiles x slots uint64 per tile in grouped order: 0 tile start
(globaltimer ns), 1..8 K steps 0, K/8, ..., 7K/8 reached, 9 main loop done, 10 C stored, 11 smid | team << 16,
and (14-slot traces) 12, 13 clock64 at the tile's start and end. 9728x8192x65536, 128x256 tiles, group 8.

usage: summary.py FILE.xz ...   (numpy)
"""
import collections, lzma, sys
import numpy as np

TILES_M, TILES_N, GROUP = 76, 32, 8
WAVE = 132


def tile_row(t):
    per = GROUP * TILES_N
    first = t // per * GROUP
    return first + t % per % min(TILES_M - first, GROUP)


def load(path):
    raw = lzma.open(path).read() if path.endswith(".xz") else open(path, "rb").read()
    d = np.frombuffer(raw, dtype=np.uint64)
    tiles, slots = int(d[0]), int(d[1])
    return d[2:].reshape(tiles, slots).astype(np.int64)


for path in sys.argv[1:]:
    a = load(path)
    rest = a[WAVE:]  # every team's first tile left out (they start together)
    dur = (rest[:, 10] - rest[:, 0]) / 1e3
    line = f"{path}: tile us median {np.median(dur):.1f} (p5 {np.percentile(dur, 5):.1f}, p95 {np.percentile(dur, 95):.1f})"
    if a.shape[1] >= 14:
        cyc = rest[:, 13] - rest[:, 12]
        line += f"; M cycles a tile {np.median(cyc) / 1e6:.3f} at {np.median(cyc / (rest[:, 10] - rest[:, 0])):.2f} GHz"
    print(line)
    start = (a[:, 0] - a[:, 0].min()) / 1e3
    spread = [start[w * WAVE:(w + 1) * WAVE].ptp() for w in range(len(a) // WAVE)]
    print("  wave start spread us: " + " ".join(f"{s:.0f}" for s in spread))
    step_us = np.median(dur) / 1024
    drift = []
    for w in range(len(a) // WAVE):
        rows = collections.defaultdict(list)
        for t in range(w * WAVE, (w + 1) * WAVE):
            rows[tile_row(t)].append(t)
        for ts in rows.values():
            if len(ts) > 1:
                for e in range(1, 9):
                    drift.append(np.ptp(a[ts, e]) / 1e3 / step_us)
    drift = np.array(drift)
    print(f"  teams sharing an A panel, their spread along K (steps): median {np.median(drift):.0f}, "
          f"p90 {np.percentile(drift, 90):.0f}, max {drift.max():.0f}")
