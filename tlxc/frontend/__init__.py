"""The frontend: Python kernel source to tile IR (see docs/architecture.md, "Data flow")."""
