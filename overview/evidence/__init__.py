"""The evidence the judges read: crash sources, the whoopsie-compatible intake, fleet
reports, ingest and counters. Imports models and plain modules, never pages or the API."""
