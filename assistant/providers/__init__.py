"""External services the assistant uses, each behind a small interface with a real local default."""
