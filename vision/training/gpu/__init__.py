"""GPU-machine helpers for train_gpu.sh (see polars/)."""
