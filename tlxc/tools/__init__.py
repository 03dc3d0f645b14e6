"""Host-side tools, named as Triton's ``triton.tools`` (code written for Triton runs unchanged)."""
