"""Where things live in a build, defined once: ``data/<subset>/<split>-<chunk>.tar`` shards holding WebDataset
samples whose members are ``<key>.<field>`` (``jpg``/``png``/``webp`` image or ``000.jpg``... frames, ``json``
metadata, ``cls`` label)."""

from __future__ import annotations

DATA_DIR = "data"
SHARD_GLOB = f"{DATA_DIR}/*/*.tar"


def shard_relpath(subset: str, chunk: int, split: str = "test") -> str:
    """The path of one shard inside a build directory."""
    return f"{DATA_DIR}/{subset}/{split}-{chunk:05d}.tar"


def shard_subset(relpath: str) -> str | None:
    """The subset of a ``data/<subset>/<name>.tar`` path (``None`` for anything else)."""
    parts = relpath.split("/")
    if len(parts) == 3 and parts[0] == DATA_DIR and parts[2].endswith(".tar"):
        return parts[1]
    return None


def split_member(name: str) -> tuple[str | None, str | None]:
    """(sample key, field) of a tar member: the key ends at the first dot of the basename (webdataset rule)."""
    slash = name.rfind("/")
    dot = name.find(".", slash + 1)
    if dot <= slash + 1:
        return None, None
    return name[:dot], name[dot + 1 :]
