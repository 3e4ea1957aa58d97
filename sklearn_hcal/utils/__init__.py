"""Internal utilities (optional dependencies, devices)."""
