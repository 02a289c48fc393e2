"""``chaosmining-pack CACHE_DIR [--out DIR] [--keep-models]``: build the shipped pack
from a model cache the smoke tier's default run wrote into
(:func:`pytest_chaosmining.core.storage.pack.build_pack`): its models, the entries
marked shippable and the derived results, whose keys hold the code that made them
(build it last before a release: any later source change makes the results miss)."""

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
    parser.add_argument(
        "--keep-models",
        action="store_true",
        help="keep the models the pack ships (other machines' among them); replace its entries and results",
    )
    args = parser.parse_args(argv)
    counts = build_pack(args.cache_dir, args.out, args.keep_models)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file()) if args.out.exists() else 0
    print(
        f"{sum(counts.values())} entries written ({', '.join(f'{s} {n}' for s, n in sorted(counts.items()))}), "
        f"the pack {size / 2**20:.1f} MiB in {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
