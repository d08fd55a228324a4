"""Benchmark families (declarative plans over the render engine)."""

from ..family import CLEAN, Benchmark, get_benchmark, list_benchmarks, register_benchmark

__all__ = ["CLEAN", "Benchmark", "get_benchmark", "list_benchmarks", "register_benchmark"]
