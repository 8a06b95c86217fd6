"""An alias of core.http.ratelimit at its path before `core` was split by concern, for scripts outside the
project that import it by that path (the FastAPI peer's comparison clears the cached overrides with
`forget_overrides`). The project itself imports core.http.ratelimit; this alias goes when they move."""

from core.http.ratelimit import forget_overrides

__all__ = ["forget_overrides"]
