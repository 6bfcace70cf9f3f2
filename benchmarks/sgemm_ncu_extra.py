"""Add a later Nsight Compute run of some chapter-11 steps to sgemm.json's ``ncu`` block, keeping
the kernels already there (``benchmarks/sgemm.py --merge-ncu`` replaces the whole block).

The recorded run (``-k regex:sgemm``) missed steps 1 and 2 (``matmul_naive``, ``matmul_tiled``)
and did not list step 3; issue 27 profiled them apart, with the same metrics:

    ncu --clock-control none --print-units base --csv -k 'regex:matmul_naive|matmul_tiled|sgemm_1d' \\
        --metrics $(python benchmarks/sgemm.py --ncu-metrics) \\
        python benchmarks/sgemm.py --size 4096 --profile naive shared reg1d > steps123.csv
    python benchmarks/sgemm_ncu_extra.py steps123.csv.gz naive shared reg1d
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
from pathlib import Path


def launches(csv_path: str) -> list[dict]:
    """ncu's --csv output: one {metric: value} per profiled launch, in launch order."""
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt") as f:
        text = f.read()
    if '"ID"' not in text:
        raise SystemExit(f'{csv_path}: no ncu CSV header ("ID", ...) in it')
    out: dict = {}
    for row in csv.DictReader(io.StringIO(text[text.index('"ID"') :])):
        v = row["Metric Value"].replace(",", "")
        try:
            v = float(v)
        except ValueError:
            pass
        out.setdefault(row["ID"], {"_kernel": row.get("Kernel Name", "")})[row["Metric Name"]] = v
    return list(out.values())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="ncu's CSV (gzip or plain), as committed under benchmarks/raw/")
    ap.add_argument("names", nargs="+", help="the steps, in the order they were launched")
    ap.add_argument("--json", default="gpulab/data/results/sgemm.json")
    ap.add_argument("--command", default=None, help="the ncu command line, recorded with the data")
    args = ap.parse_args(argv)
    runs = launches(args.csv)
    if len(runs) != len(args.names):
        raise SystemExit(
            f"{len(runs)} profiled launches in {args.csv}, expected {len(args.names)}: {args.names}"
        )
    doc = json.loads(Path(args.json).read_text())
    block = doc.setdefault("ncu", {})
    kernels = block.setdefault("kernels", {})
    for name, rec in zip(args.names, runs):
        kernels[name] = {k: v for k, v in rec.items() if k != "_kernel"}
    block.setdefault("extra_runs", []).append(
        {
            "steps": args.names,
            "raw": args.csv,
            "command": args.command,
            "kernels_as_named_by_ncu": [r["_kernel"][:80] for r in runs],
        }
    )
    Path(args.json).write_text(json.dumps(doc, indent=1))
    print("merged", ", ".join(args.names), "into", args.json)


if __name__ == "__main__":
    main()
