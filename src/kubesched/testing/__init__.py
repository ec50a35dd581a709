"""Test helpers: fluent object builders (upstream pkg/scheduler/testing)."""
