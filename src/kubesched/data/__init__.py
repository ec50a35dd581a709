"""Data files generated from upstream sources (see each file's generator under ``tools/``)."""
