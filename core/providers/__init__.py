"""External services shared by several apps, each behind a small interface with a real local default."""
