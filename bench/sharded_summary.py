"""Summary of bench/sharded.sh: medians over rounds per topology and shard count.

    python3 bench/sharded_summary.py RUNS.jsonl [--quick]

Phase (a) publishes `single` awaited messages then `batch` in batches of 1000; phase (b)
publishes `backlog` in batches, then delivers and acks them (a message's whole life).
"""

import json
import statistics
import sys

COUNTS = {
    False: {"single": 10_000, "batch": 100_000, "backlog": 100_000},
    True: {"single": 300, "batch": 5_000, "backlog": 3_000},
}


def main() -> None:
    path = sys.argv[1]
    quick = len(sys.argv) > 2 and sys.argv[2] == "--quick"
    c = COUNTS[quick]
    runs = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    keys = []
    for r in runs:
        k = (r["topology"], r["shards"])
        if k not in keys:
            keys.append(k)

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else float("nan")

    print(
        "| topology | masters | shards | publish single /s | publish batch /s | deliver+ack /s "
        "| Redis CPU µs/msg, (a) publish | Redis CPU µs/msg, (b) life | (b) per master µs/msg |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for topo, n in keys:
        a = [r for r in runs if (r["topology"], r["shards"], r["phase"]) == (topo, n, "a")]
        b = [r for r in runs if (r["topology"], r["shards"], r["phase"]) == (topo, n, "b")]
        masters = len(a[0]["cpu_s_per_master"]) if a else 0
        single = med([r["bench"]["publish_single_per_s"] for r in a])
        batch = med([r["bench"]["publish_batch_per_s"] for r in a])
        deliver = med([r["bench"]["deliver_ack_per_s"] for r in b])
        pub_us = med([sum(r["cpu_s_per_master"]) * 1e6 / (c["single"] + c["batch"]) for r in a])
        life_us = med([sum(r["cpu_s_per_master"]) * 1e6 / c["backlog"] for r in b])
        per_master = [med([r["cpu_s_per_master"][i] * 1e6 / c["backlog"] for r in b]) for i in range(masters)]
        print(
            f"| {topo} | {masters} | {n} | {single:,.0f} | {batch:,.0f} | {deliver:,.0f} | {pub_us:.1f} "
            f"| {life_us:.1f} | {' / '.join(f'{x:.1f}' for x in per_master)} |"
        )
    print()
    print(f"rounds: {max(r['round'] for r in runs)}; medians; counts: {c}")


if __name__ == "__main__":
    main()
