#!/usr/bin/env python3
"""Side-by-side table of the medians of several rounds of redelay and BullMQ results.

    python3 bench/compare.py bench/results/<timestamp>/

Reads every *.json result in the folder (schema: bench/README.md), groups them by their
`system` field, and prints, for each figure, the median over the rounds of each system, the
ratio redelay/BullMQ, and the issue's target. Writes summary.json and summary.md beside them.
"""

import glob
import json
import os
import statistics
import sys

# (label, path in the result, unit, better: "high" or "low", target for redelay or None; the
# targets are issue 14's: lateness p99 <= 1 ms, memory <= 200 B, 10x BullMQ)
FIGURES = [
    ("(a) publish, single", ("publish_single_per_s",), "msg/s", "high", None),
    ("(a) publish, batched", ("publish_batch_per_s",), "msg/s", "high", ">= 100000 and >= 10x"),
    ("(b) deliver+ack, due backlog", ("deliver_ack_per_s",), "msg/s", "high", ">= 50000 and >= 10x"),
    ("(c) low-load lateness p50", ("low_load", "p50_ms"), "ms", "low", "<= 1"),
    ("(c) low-load lateness p90", ("low_load", "p90_ms"), "ms", "low", None),
    ("(c) low-load lateness p99", ("low_load", "p99_ms"), "ms", "low", "<= 1"),
    ("(c) low-load lateness max", ("low_load", "max_ms"), "ms", "low", None),
    ("(d) burst: time to drain", ("burst", "drain_s"), "s", "low", None),
    ("(d) burst lateness p99", ("burst", "p99_ms"), "ms", "low", "<= 1000"),
    ("(e) Redis memory per pending msg", ("memory", "bytes_per_message"), "B", "low", "<= 200"),
    ("Redis CPU per msg: publish single", ("redis_cpu_us_per_msg", "publish_single"), "µs", "low", None),
    ("Redis CPU per msg: publish batched", ("redis_cpu_us_per_msg", "publish_batch"), "µs", "low", None),
    ("Redis CPU per msg: deliver+ack", ("redis_cpu_us_per_msg", "deliver_ack"), "µs", "low", None),
]


def dig(obj, path):
    for k in path:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj if isinstance(obj, (int, float)) and not isinstance(obj, bool) else None


def fmt(x):
    if x is None:
        return "—"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}" if abs(x) >= 0.01 else f"{x:.2g}"


def met(label_target, red, bull):
    """Whether redelay's median meets the issue's target (None when unknown)."""
    if label_target is None or red is None:
        return None
    ok = True
    for part in label_target.split(" and "):
        op, val = part.split()
        if val.endswith("x"):
            if bull is None or bull == 0:
                return None
            ok &= red >= float(val[:-1]) * bull
        elif op == ">=":
            ok &= red >= float(val)
        else:
            ok &= red <= float(val)
    return ok


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[0]
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        if os.path.basename(path).startswith("summary"):
            continue
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            print(f"compare: skipping {path}: {e}", file=sys.stderr)
            continue
        runs.setdefault(str(r.get("system", "?")), []).append(r)
    red, bull = runs.get("redelay", []), runs.get("bullmq", [])
    versions = {s: sorted({str(r.get("version")) for r in rs}) for s, rs in runs.items()}

    rows = []
    for label, path, unit, better, target in FIGURES:
        rv = [v for v in (dig(r, path) for r in red) if v is not None]
        bv = [v for v in (dig(r, path) for r in bull) if v is not None]
        rm = statistics.median(rv) if rv else None
        bm = statistics.median(bv) if bv else None
        ratio = rm / bm if rm is not None and bm not in (None, 0) else None
        rows.append(
            {
                "figure": label,
                "key": ".".join(path),
                "unit": unit,
                "better": better,
                "redelay_median": rm,
                "bullmq_median": bm,
                "ratio_redelay_over_bullmq": ratio,
                "redelay_values": rv,
                "bullmq_values": bv,
                "target": target,
                "target_met": met(target, rm, bm),
            }
        )

    header = ["figure", "unit", f"redelay (n={len(red)})", f"BullMQ (n={len(bull)})", "redelay/BullMQ", "target", "met"]
    table = [header]
    for r in rows:
        ratio = r["ratio_redelay_over_bullmq"]
        table.append(
            [
                r["figure"],
                r["unit"],
                fmt(r["redelay_median"]),
                fmt(r["bullmq_median"]),
                "—" if ratio is None else (f"{ratio:.2f}x" if ratio >= 0.01 else f"{ratio:.2g}x"),
                r["target"] or "",
                {True: "yes", False: "NO", None: ""}[r["target_met"]],
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    right = {2, 3, 4}
    lines = [
        "medians over rounds; higher is better for msg/s, lower for ms, s and B",
        "versions: " + ", ".join(f"{s} {'/'.join(v)}" for s, v in sorted(versions.items())),
    ]
    for i, row in enumerate(table):
        lines.append(
            "  ".join(c.rjust(widths[j]) if j in right else c.ljust(widths[j]) for j, c in enumerate(row)).rstrip()
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    print("\n".join(lines))

    md = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if j in right else "---" for j in range(len(header))) + "|",
    ]
    md += ["| " + " | ".join(row) + " |" for row in table[1:]]
    with open(os.path.join(folder, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(
            {"rounds": {s: len(rs) for s, rs in runs.items()}, "versions": versions, "figures": rows}, f, indent=1
        )
    if not bull and not red:
        print("compare: no results found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
