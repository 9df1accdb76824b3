"""Data package: the YAML presets (GPUs, models, storage, scenarios) shipped with calc."""
