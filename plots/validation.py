#!/usr/bin/env python3
"""Measured vs predicted scatter of a `composim validate` report, one colour per category.

  /usr/bin/python3 plots/validation.py REPORT.csv OUT.png   (also writes OUT.pdf)

Each point is one measured value (a step time in s, a bus bandwidth or copy bandwidth in
GB/s, a small-message time in us) against composim's prediction in the same unit, on
log-log axes; the line is predicted = measured and the grey band +-10%.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(report, out):
    rows = list(csv.DictReader(open(report)))
    if not rows:
        print(f"composim: error: {report}: no points to plot", file=sys.stderr)
        return 2
    fig, ax = plt.subplots(figsize=(6.4, 6))
    colours = {"self-replay": "tab:green", "collective": "tab:blue", "p2p": "tab:orange", "end-to-end": "tab:red"}
    for cat in sorted({r["category"] for r in rows}):
        pts = [(float(r["measured"]), float(r["predicted"])) for r in rows if r["category"] == cat]
        ax.scatter([m for m, _ in pts], [p for _, p in pts], s=16, alpha=0.75, label=f"{cat} ({len(pts)} points)",
                   color=colours.get(cat, "tab:gray"), zorder=3)
    lo = min(min(float(r["measured"]), float(r["predicted"])) for r in rows)
    hi = max(max(float(r["measured"]), float(r["predicted"])) for r in rows)
    lo, hi = max(lo * 0.7, 1e-12), hi * 1.4
    xs = [lo, hi]
    ax.plot(xs, xs, "k-", lw=0.8, label="predicted = measured", zorder=2)
    ax.fill_between(xs, [x * 0.9 for x in xs], [x * 1.1 for x in xs], color="0.85", label="+-10%", zorder=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured (step time in s, bandwidth in GB/s, small-message time in us)")
    ax.set_ylabel("predicted by composim (same unit)")
    ax.set_title("composim validate: measured vs predicted")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    # Both images are drawn to temporary files and renamed into place together: a failure or
    # a stop part-way leaves neither, never a half-written PNG or a PNG without its PDF.
    pending, placed = [], []
    try:
        for final, fmt in ((out, "png"), (os.path.splitext(out)[0] + ".pdf", "pdf")):
            tmp = f"{final}.tmp-{os.getpid()}"
            pending.append((tmp, final))
            fig.savefig(tmp, dpi=120, format=fmt)
        for tmp, final in pending:
            os.replace(tmp, final)
            placed.append(final)
    except BaseException:
        for final in placed:
            os.remove(final)
        raise
    finally:
        for tmp, _ in pending:
            if os.path.exists(tmp):
                os.remove(tmp)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
