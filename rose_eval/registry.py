"""A small typed registry: register by name, refuse collisions, list, get."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """A name is missing from, or already taken in, a registry."""

    def __str__(self) -> str:  # KeyError quotes its message; we want the plain line
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Named plug-ins of one kind (visual sources, task templates, region kinds)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Register ``item`` under ``name``; a second registration of a name is an error."""
        if name in self._items:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def decorate(item: T) -> T:
            return self.add(name, item)

        return decorate

    def get(self, name: str) -> T:
        """Return the item called ``name`` or raise a one-line error listing the known names."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
