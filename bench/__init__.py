"""Benchmarks of Phasing at archive scale: `make bench` (see bench/__main__.py)."""
