"""PTX for sm_90a and sm_100a: the NVIDIA code generator (issue 3)."""
