"""Chapter 08's GPU measurements, read from benchmarks/results/reduction.json (written by
benchmarks/reduction.py on a GPU): a summary that says where and when, and a figure."""
from __future__ import annotations

import json
from pathlib import Path

def find(path=None) -> Path | None:
    """The results file: ``path``, else reduction.json where gpulab.results looks; None when
    there is none (e.g. a pip install)."""
    if path:
        return Path(path) if Path(path).is_file() else None
    from gpulab import results
    return results.path("reduction")


def load(path=None) -> dict | None:
    """The parsed results, or None when the benchmark has not been run in this copy."""
    p = find(path)
    return json.loads(p.read_text()) if p else None


def summary(res: dict | None) -> str:
    """Lines of text: the GPU and date, per-block tree vs shuffle, and the device-wide sums."""
    if not res:
        return ("No GPU measurements in this copy: run `python benchmarks/reduction.py` on a "
                "machine with an NVIDIA GPU; it writes benchmarks/results/reduction.json.")
    env = res.get("environment", {})
    lines = [f"measured on {env.get('gpu')} (driver {env.get('nvidia_smi') or env.get('cuda_driver_api')}), "
             f"{env.get('when_utc')}, numba-cuda {env.get('numba-cuda')}"]
    lines.append("per-block sums (256 threads): n, tree GB/s, shuffle GB/s, shuffle speed-up")
    for r in res.get("block_sums", []):
        bound = r["tree"].get("launch_bound") or r["shuffle"].get("launch_bound")
        lines.append(f"  {r['n']:>11,}  {r['tree']['GBps']:8.0f}  {r['shuffle']['GBps']:8.0f}  "
                     f"{r['shuffle_over_tree']:.2f}x"
                     + ("  (launch-bound: measures the launch, not the kernel)" if bound else ""))
    d = res.get("device_sum")
    if d:
        b = d.get("best")
        lines.append(f"whole-array sum of {d['n']:,} float32 ({d['bytes'] / 1e9:.2f} GB):")
        if b:
            lines.append(f"  ours, best: {b['GBps']:.0f} GB/s ({b['kernel']}, grid {b['grid']}, "
                         f"block {b['block']}, rel. error {b['rel_err']:.1e})")
        for name, lib in d.get("libraries", {}).items():
            if "GBps" in lib:
                ratio = d.get(f"best_over_{name}")
                tail = f"; ours / {name} = {ratio:.1%}" if ratio else ""
                lines.append(f"  {name} {lib.get('version')}: {lib['GBps']:.0f} GB/s{tail}")
            else:
                lines.append(f"  {name}: not measured ({lib.get('error')})")
    return "\n".join(lines)


def plot(res: dict | None, ax=None):
    """Bandwidth of the per-block tree and shuffle kernels against input size (None if no data)."""
    if not res or not res.get("block_sums"):
        return None
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6))
    rows = res["block_sums"]
    n = [r["n"] for r in rows]
    for key, style in (("tree", "o-"), ("shuffle", "s-")):
        ax.plot(n, [r[key]["GBps"] for r in rows], style, label=key)
    d = res.get("device_sum", {})
    for name, lib in d.get("libraries", {}).items():
        if "GBps" in lib:
            ax.axhline(lib["GBps"], ls=":", color="0.4")
            ax.text(n[0], lib["GBps"], f" {name}.sum, n={d['n']:,}", va="bottom", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements (float32)")
    ax.set_ylabel("GB/s read")
    ax.set_title(f"per-block sums on {res['environment'].get('gpu')}", fontsize=10)
    ax.legend()
    return ax
