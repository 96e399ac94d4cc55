#!/usr/bin/env python3
"""Fallback for machines without gnuplot (the lent GPU machine has matplotlib): draws the same
chart as plot.gnuplot from convnd-bench's plot.dat.

usage: plot.py PLOT_DAT OUT_PNG [BASELINE] [TITLE]"""
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401


def main():
    dat, png = sys.argv[1], sys.argv[2]
    baseline = sys.argv[3] if len(sys.argv) > 3 else "cuDNN"
    title = sys.argv[4] if len(sys.argv) > 4 else "convnd-bench"
    with open(dat) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    header, data = rows[0], rows[1:]
    series = [h.strip('"') for h in header[1:]]
    problems = [r[0].strip('"') for r in data]
    width = 0.85 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(18, 8.2))
    colors = plt.get_cmap("tab20").colors  # distinct colours for up to 20 candidates
    for j, name in enumerate(series):
        xs, ys = [], []
        for i, r in enumerate(data):
            v = r[j + 1] if j + 1 < len(r) else "-"
            if v != "-" and math.isfinite(float(v)):
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(float(v))
        ax.bar(xs, ys, width, label=name, color=colors[j % len(colors)], edgecolor="0.3")
    ax.set_yscale("log", base=10)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1.2)
    ax.set_xticks(range(len(problems)))
    ax.set_xticklabels(problems, rotation=35, ha="right", fontsize=9)
    ax.set_ylabel(f"speed relative to {baseline} (log scale, higher is faster)")
    ax.set_title(title)
    ax.grid(axis="y", color="0.85")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
