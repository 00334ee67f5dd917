"""The evidence the judges read: crash sources, the whoopsie-compatible intake, fleet
reports, ingest at archive scale (set-based, partitioned by day, kept for a set time) and
counters. Imports models and plain modules, never pages or the API."""
