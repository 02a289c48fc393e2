"""``chaosmining-pack CACHE_DIR [--out DIR]``: build the shipped model pack from a
model cache the smoke tier trained into (:func:`pytest_chaosmining.core.storage.pack.build_pack`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_chaosmining.core.storage.pack import build_pack
from pytest_chaosmining.core.storage.pack_location import SHIPPED


def main(argv: list[str] | None = None) -> int:
    """Command line: build the pack from a model cache."""
    parser = argparse.ArgumentParser(description="Build the shipped model pack from a model cache.")
    parser.add_argument("cache_dir", type=Path, help="a --chaosmining-cache directory the smoke tier trained into")
    parser.add_argument("--out", type=Path, default=SHIPPED, help="pack folder to write (default: the package's)")
    args = parser.parse_args(argv)
    counts = build_pack(args.cache_dir, args.out)
    size = sum(p.stat().st_size for p in args.out.rglob("*.pt")) if args.out.exists() else 0
    print(
        f"{sum(counts.values())} models ({', '.join(f'{s} {n}' for s, n in sorted(counts.items()))}), "
        f"{size / 2**20:.1f} MiB in {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
