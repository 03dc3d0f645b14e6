"""Code generators, one package per target family (see DESIGN.md)."""
