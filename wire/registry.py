"""The one registry of implemented APIs: it refuses duplicates and is the single source of
the ApiVersions answer, so kcoord advertises exactly what it can decode and encode."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from wire.fields import Message

__all__ = ["ApiSpec", "all_apis", "lookup", "register"]


@dataclass(frozen=True)
class ApiSpec:
    """One Kafka API: its key, name and request/response schemas (same version range)."""

    api_key: int
    name: str
    request: Message
    response: Message

    @cached_property
    def min_version(self) -> int:
        """Lowest implemented version."""
        return self.request.version_range.start

    @cached_property
    def max_version(self) -> int:
        """Highest implemented version."""
        return self.request.version_range.stop - 1

    def supports(self, version: int) -> bool:
        """Whether ``version`` is implemented."""
        return self.min_version <= version <= self.max_version


_REGISTRY: dict[int, ApiSpec] = {}


def register(spec: ApiSpec) -> ApiSpec:
    """Add an API; a second registration of the same key is a programming error."""
    if spec.api_key in _REGISTRY:
        raise ValueError(f"API key {spec.api_key} ({spec.name}) is already registered")
    if spec.request.versions() != spec.response.versions():
        raise ValueError(f"{spec.name}: request and response version ranges differ")
    _REGISTRY[spec.api_key] = spec
    return spec


def lookup(api_key: int) -> ApiSpec | None:
    """The registered API for a key, or None."""
    return _REGISTRY.get(api_key)


def all_apis() -> list[ApiSpec]:
    """Every registered API, by key."""
    return [_REGISTRY[key] for key in sorted(_REGISTRY)]
