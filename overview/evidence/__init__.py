"""Crash evidence at archive scale: set-based ingest, partitions and retention; imports models and services, never pages or judges."""
