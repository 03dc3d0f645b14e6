"""The frontend: Python kernel source to tile IR (see DESIGN.md, "The pipeline")."""
