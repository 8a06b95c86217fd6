"""The table of every route and who may call it, one module per app.

Each module defines `ROUTES = {"METHOD /path/{param}": Access.X}`. tests/test_access_policy.py
merges them and checks that every route of the project is listed (so a new endpoint without a
rule fails the suite), that each view declares the same access, and that it behaves that way.
"""

from __future__ import annotations

import importlib
import pkgutil

from core.http.access import Access


def all_routes() -> dict[str, Access]:
    merged: dict[str, Access] = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for key, access in module.ROUTES.items():
            assert key not in merged, f"{key} is listed twice"
            merged[key] = access
    return merged
