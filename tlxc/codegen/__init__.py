"""Code generators, one package per target family (see docs/architecture.md)."""
