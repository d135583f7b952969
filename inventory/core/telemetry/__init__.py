"""Telemetry decoding, native-format adapters, rate maths and rollups: pure, ORM-free code."""
