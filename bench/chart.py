#!/usr/bin/env python3
"""Lateness distributions of redelay and BullMQ as CDF curves, one panel per phase.

    python3 bench/chart.py -o lateness.png redelay.json bullmq.json [more.json ...]

Each input is one `--json` result (schema: bench/README.md). Files are grouped by their
`system` field; the lateness values of several rounds of one system are pooled. Panels:
(c) `low_load.lateness_ms` and (d) `burst.lateness_ms`. The x axis is logarithmic, so
values below --floor-ms (by default the decade below the smallest value, at least 0.01 ms;
including any negative value from clock granularity) are drawn at the floor.
"""

import argparse
import json
import math
import sys

PHASES = [
    ("low_load", "(c) low load: lateness after due time"),
    ("burst", "(d) burst: lateness after the common due time"),
]
COLORS = {"redelay": "#d62728", "bullmq": "#1f77b4"}


def nearest_rank(sorted_values, p):
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def ms(x):
    """A lateness for the legend: 0.152, 1.84, 48.1, 658, 6,550."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def load(paths):
    systems = {}  # system -> {"files": n, "low_load": [...], "burst": [...], "version": ...}
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        name = str(r.get("system", path))
        s = systems.setdefault(name, {"files": 0, "version": r.get("version")})
        s["files"] += 1
        for key, _ in PHASES:
            values = (r.get(key) or {}).get("lateness_ms") or []
            s.setdefault(key, []).extend(float(v) for v in values)
    return systems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="JSON results of redelay and/or BullMQ")
    ap.add_argument("-o", "--out", default="lateness.png", help="PNG to write")
    ap.add_argument(
        "--floor-ms",
        type=float,
        default=None,
        help="left end of the log axis (default: the decade below the smallest value, at least 0.01)",
    )
    ap.add_argument("--title", default="Lateness after due time (CDF), same Redis, same host")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = load(args.results)
    if args.floor_ms is None:
        positive = [v for s in systems.values() for k, _ in PHASES for v in s.get(k, []) if v > 0]
        args.floor_ms = max(0.01, 10 ** math.floor(math.log10(min(positive)))) if positive else 0.01
    order = sorted(systems, key=lambda n: (n != "redelay", n))
    fig, axes = plt.subplots(1, len(PHASES), figsize=(13, 5.2))
    for ax, (key, title) in zip(axes, PHASES):
        top = args.floor_ms * 10
        drawn = False
        for name in order:
            s = systems[name]
            values = sorted(max(v, args.floor_ms) for v in s.get(key, []))
            if not values:
                continue
            drawn = True
            top = max(top, values[-1])
            n = len(values)
            ys = [(i + 1) / n for i in range(n)]
            raw = sorted(s[key])
            p50, p99 = nearest_rank(raw, 50), nearest_rank(raw, 99)
            label = (
                f"{name}{' ' + str(s['version']) if s.get('version') else ''}: "
                f"p50 {ms(p50)} ms, p99 {ms(p99)} ms, max {ms(raw[-1])} ms "
                f"(n={n:,}, {s['files']} run{'s' if s['files'] != 1 else ''})"
            )
            ax.step(values, ys, where="post", color=COLORS.get(name), label=label, linewidth=1.6)
        ax.set_xscale("log")
        ax.set_xlim(args.floor_ms, top * 1.5)
        ax.set_ylim(0, 1.005)
        for q in (0.5, 0.9, 0.99):
            ax.axhline(q, color="#999999", linewidth=0.6, linestyle=":")
        ax.set_yticks([0, 0.25, 0.5, 0.75, 0.9, 0.99])
        ax.set_xlabel("lateness: processing start − due time (ms, log scale)")  # noqa: RUF001 (a real minus sign)
        ax.set_ylabel("fraction of messages")
        ax.set_title(title)
        ax.grid(True, which="major", axis="x", alpha=0.3)
        if drawn:
            ax.legend(loc="upper left", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"chart: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
