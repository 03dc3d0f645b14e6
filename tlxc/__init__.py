"""tlxc: a standalone compiler for TLX-style GPU kernels."""
