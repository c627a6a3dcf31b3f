#!/usr/bin/env python3
"""Plots a soak's CSV (`--soak-csv PATH` of the bench's soak): the process's
RSS beside its heap in use and the free memory glibc's arenas keep, and
Redis's used memory, against minutes. Needs matplotlib (`pip install
matplotlib`); writes a PNG.

    scripts/plot_soak.py soak.csv out.png [TITLE] [more.csv LABEL ...]

Extra CSV/label pairs draw their RSS and heap on the same axes, to compare
runs (say, the default allocator settings and MALLOC_ARENA_MAX=2).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    minutes = [float(r["seconds"]) / 60 for r in rows]
    mb = lambda key: [int(r[key]) / 1e6 for r in rows]  # noqa: E731
    return minutes, mb("rss_bytes"), mb("heap_bytes"), mb("arenas_free_bytes"), mb("redis_bytes")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "soak"
    extra = sys.argv[4:]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True, height_ratios=[3, 1])
    m, rss, heap, free, redis = read(path)
    top.plot(m, rss, label="process RSS", color="tab:red")
    top.plot(m, heap, label="heap in use (counting allocator)", color="tab:blue")
    top.plot(m, free, label="free memory glibc's arenas keep", color="tab:gray", linestyle="--")
    for i in range(0, len(extra) - 1, 2):
        em, erss, eheap, _, _ = read(extra[i])
        top.plot(em, erss, label=f"RSS, {extra[i + 1]}", color="tab:orange")
        top.plot(em, eheap, label=f"heap, {extra[i + 1]}", color="tab:cyan")
    top.set_ylabel("MB")
    top.set_ylim(bottom=0)
    top.grid(alpha=0.3)
    top.legend(loc="lower right")
    top.set_title(title)
    bottom.plot(m, redis, label="Redis used_memory", color="tab:green")
    bottom.set_ylabel("MB")
    bottom.set_xlabel("minutes")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
