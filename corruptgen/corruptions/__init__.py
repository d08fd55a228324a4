"""Registered corruptions: ``get(name)`` returns a callable ``corruption(image, rng) -> image``."""

from .registry import Corruption, as_generator, families, get, list_corruptions, register

__all__ = ["Corruption", "as_generator", "families", "get", "list_corruptions", "register"]
