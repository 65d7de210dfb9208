#!/usr/bin/env python3
"""Plots of a composim output directory, as PNG and PDF (what `composim plot DIR` runs).

  /usr/bin/python3 plots/plot.py DIR

- DIR/results.csv (a sweep): iteration time against the first numeric axis, one line per
  value of the next axis, the other axes at their first value (sweep_iteration.png); the
  time breakdown of every configuration at the largest value of that axis
  (sweep_breakdown.png).
- DIR/links.csv (a run): utilisation over time of the busiest link directions (links.png).
- DIR/iterations.csv (a run): measured and predicted time per iteration (iterations.png).
- DIR/report.csv (composim validate): measured vs predicted (report.png).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BREAKDOWN = [("compute_s", "compute"), ("exposed_communication_s", "exposed communication"), ("memcpy_s", "memcpy"), ("idle_s", "idle")]


# Figures are drawn to temporary files and renamed into place only once every plot of the
# directory has been drawn: a failure leaves no partial set of images.
PENDING = []


def save(fig, path):
    fig.tight_layout()
    for final, fmt in ((path, "png"), (os.path.splitext(path)[0] + ".pdf", "pdf")):
        tmp = f"{final}.tmp-{os.getpid()}"
        PENDING.append((tmp, final))
        fig.savefig(tmp, dpi=110, format=fmt)
    plt.close(fig)


def commit():
    for tmp, final in PENDING:
        os.replace(tmp, final)
        if final.endswith(".png"):
            print("wrote", final)
    PENDING.clear()


def discard():
    for tmp, _ in PENDING:
        try:
            os.remove(tmp)
        except OSError:
            pass
    PENDING.clear()


def numeric(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def sweep(d):
    rows = [r for r in csv.DictReader(open(os.path.join(d, "results.csv"))) if not r["error"]]
    if not rows:
        print(f"composim: error: {d}/results.csv: no successful point to plot", file=sys.stderr)
        return 2
    header = list(rows[0].keys())
    axes = header[1:header.index("predicted_iteration_s")]
    x = next((a for a in axes if all(numeric(r[a]) for r in rows)), axes[0])
    rest = [a for a in axes if a != x]
    series = rest[0] if rest else None
    fixed = {a: rows[0][a] for a in rest[1:]}
    sel = [r for r in rows if all(r[a] == v for a, v in fixed.items())]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    groups = {}
    for r in sel:
        groups.setdefault(r[series] if series else "all", []).append(r)
    for name, rs in groups.items():
        rs.sort(key=lambda r: float(r[x]) if numeric(r[x]) else r[x])
        xs = [float(r[x]) if numeric(r[x]) else r[x] for r in rs]
        ax1.plot(xs, [1e3 * float(r["predicted_iteration_s"]) for r in rs], "o-", label=name)
        ax2.plot(xs, [1e3 * float(r["exposed_communication_s"]) for r in rs], "o-", label=name)
    for ax, what in ((ax1, "predicted iteration time (ms)"), (ax2, "exposed communication per iteration (ms)")):
        ax.set_xlabel(x)
        ax.set_ylabel(what)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title=series)
    sub = ", ".join(f"{a} = {v}" for a, v in fixed.items())
    fig.suptitle("composim sweep" + (f" ({sub})" if sub else ""), fontsize=10)
    save(fig, os.path.join(d, "sweep_iteration.png"))
    # Breakdown at the largest x, one bar per configuration of the other axes.
    xmax = max(sel, key=lambda r: float(r[x]) if numeric(r[x]) else 0)[x]
    bars = [r for r in rows if r[x] == xmax]
    labels = [" / ".join(r[a] for a in rest) for r in bars]
    fig, ax = plt.subplots(figsize=(min(40, max(6, 0.35 * len(bars) + 2)), 4.5))
    bottom = [0.0] * len(bars)
    for key, name in BREAKDOWN:
        vals = [1e3 * float(r[key]) for r in bars]
        ax.bar(range(len(bars)), vals, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title(f"time breakdown per configuration at {x} = {xmax}", fontsize=10)
    ax.legend(fontsize=8)
    save(fig, os.path.join(d, "sweep_breakdown.png"))
    return 0


def links(d):
    rows = list(csv.DictReader(open(os.path.join(d, "links.csv"))))
    if not rows:
        return 0
    series = {}
    for r in rows:
        series.setdefault(f"{r['from']} -> {r['to']}", []).append((float(r["bin_start_s"]), float(r["bin_end_s"]), float(r["utilisation"])))
    top = sorted(series, key=lambda k: -sum(u for _, _, u in series[k]))[:6]
    fig, ax = plt.subplots(figsize=(9, 4))
    for name in top:
        pts = series[name]
        ax.step([1e3 * a for a, _, _ in pts], [100 * u for _, _, u in pts], where="post", label=name)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("link utilisation (%)")
    ax.set_title("utilisation over time of the busiest link directions", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, os.path.join(d, "links.png"))
    return 0


def iterations(d):
    rows = list(csv.DictReader(open(os.path.join(d, "iterations.csv"))))
    xs = range(len(rows))
    measured = [1e3 * float(r["measured_s"]) for r in rows]
    predicted = [1e3 * float(r["predicted_s"]) for r in rows]
    if len(rows) <= 40:  # bars, one labelled pair per iteration
        fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(rows) + 2), 4))
        ax.bar([i - 0.2 for i in xs], measured, width=0.4, label="measured")
        ax.bar([i + 0.2 for i in xs], predicted, width=0.4, label="predicted")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["iteration"] for r in rows], rotation=45, fontsize=7)
    else:  # many iterations: lines over the iteration index (a bar each made images too wide to draw)
        fig, ax = plt.subplots(figsize=(10, 4))
        ax.plot(xs, measured, label="measured", linewidth=0.8)
        ax.plot(xs, predicted, label="predicted", linewidth=0.8)
        ax.set_xlabel(f"iteration (index in iterations.csv; {rows[0]['iteration']} to {rows[-1]['iteration']})")
    ax.set_ylabel("iteration time (ms)")
    ax.legend(fontsize=8)
    save(fig, os.path.join(d, "iterations.png"))
    return 0


def main(d):
    if not os.path.isdir(d):
        why = "not a directory (give the --out directory of run, sweep or validate)" if os.path.exists(d) else "no such directory"
        print(f"composim: error: {d}: {why}", file=sys.stderr)
        return 2
    done = 0
    if os.path.exists(os.path.join(d, "results.csv")):
        done += 1
        if sweep(d):
            discard()
            return 2
    if os.path.exists(os.path.join(d, "links.csv")):
        done += 1
        links(d)
    if os.path.exists(os.path.join(d, "iterations.csv")):
        done += 1
        iterations(d)
    if os.path.exists(os.path.join(d, "report.csv")):
        done += 1
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import validation
        if validation.main(os.path.join(d, "report.csv"), os.path.join(d, "report.png")):
            return 2
        print("wrote", os.path.join(d, "report.png"))
    if not done:
        print(f"composim: error: {d}: no results.csv, links.csv, iterations.csv or report.csv to plot", file=sys.stderr)
        return 2
    commit()
    return 0


if __name__ == "__main__":
    # SIGTERM (a plain kill, as composim's own commands take it) ends like Ctrl-C: the images
    # drawn so far are removed (finally, below), none left half-made.
    import signal
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1]))
    except (KeyError, ValueError, TypeError, IndexError, csv.Error, UnicodeDecodeError) as e:
        # A CSV that is not composim's (a missing column, a non-number, a short row).
        print(f"composim: error: {sys.argv[1]}: a CSV there is not composim output ({type(e).__name__}: {e})", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        # A file it cannot read or a plot it cannot write (a directory in its place, no
        # permission, a full disk). A rename names the image's own path (filename2), not the
        # temporary file drawn first.
        print(f"composim: error: {e.filename2 or e.filename or sys.argv[1]}: {e.strerror or e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        discard()  # images of a run that did not finish (none once commit() has run)
