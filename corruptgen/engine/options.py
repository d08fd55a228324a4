"""How a build runs — never what it writes: one object from the API to the engine and one per chunk task."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import CorruptgenError

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class RayOptions:
    """How to reach the cluster and what each chunk task asks for.

    Attributes:
        address: ``None`` starts a local Ray instance; ``"auto"`` joins a running cluster; or ``ray://host:port``.
        num_cpus: CPUs per chunk task.
        num_gpus: GPUs per chunk task (set automatically to 1 for ``--device cuda`` unless given).
        max_retries: retries of a task whose worker died or which raised.
        local_cpus: CPUs of a local instance started here (``None``: all).
    """

    address: str | None = None
    num_cpus: float = 1
    num_gpus: float | None = None
    max_retries: int = 3
    local_cpus: int | None = None


@dataclass(frozen=True)
class RenderOptions:
    """What a chunk task needs to know about speed: corruptions with a batched form run on ``device`` in batches of
    ``batch_size``; ``io_threads`` > 0 overlaps decoding and encoding with corrupting."""

    device: str = "cpu"
    batch_size: int = 64
    io_threads: int = 0


@dataclass(frozen=True)
class RunOptions:
    """Workers, device, batching, I/O threads and engine of a build (checked when made). None of them changes a byte
    of the output: every sample's seed comes from the plan alone.

    ``io_threads=None`` means 0 on the CPU and 8 with CUDA; ``engine`` is ``local`` (processes) or ``ray``.
    """

    workers: int = 1
    device: str = "cpu"
    batch_size: int = 64
    io_threads: int | None = None
    engine: str = "local"
    ray: RayOptions | None = None
    progress: bool = False
    render: RenderOptions = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise CorruptgenError(f"--workers must be at least 1, got {self.workers}")
        if self.batch_size < 1:
            raise CorruptgenError(f"--batch-size must be at least 1, got {self.batch_size}")
        if self.engine not in ENGINES:
            raise CorruptgenError(f"unknown --engine {self.engine!r}; use one of {', '.join(ENGINES)}")
        check_device(self.device)
        threads = (8 if self.device.startswith("cuda") else 0) if self.io_threads is None else self.io_threads
        if threads < 0:
            raise CorruptgenError(f"--io-threads must be at least 0, got {threads}")
        object.__setattr__(self, "io_threads", threads)
        object.__setattr__(self, "render", RenderOptions(self.device, self.batch_size, threads))


def check_device(device: str) -> None:
    """``cpu`` or an available ``cuda[:N]`` (one line otherwise)."""
    if device == "cpu":
        return
    if not device.startswith("cuda"):
        raise CorruptgenError(f"unknown --device {device!r}; use cpu or cuda[:N]")
    import torch

    if not torch.cuda.is_available():
        raise CorruptgenError(f"--device {device}: CUDA is not available on this machine (torch {torch.__version__})")
