"""Host-side tools, named as Triton's ``triton.tools`` (drop-in rule, DESIGN.md)."""
