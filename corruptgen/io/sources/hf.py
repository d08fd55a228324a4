"""``hf:<name-or-local-path>[:<split>]`` source: a Hugging Face ``datasets`` dataset (hub name, ``save_to_disk``
directory, or a local directory loadable with ``load_dataset``)."""

from __future__ import annotations

import os
import re
from typing import Any

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError
from corruptgen.io.labels import NUM_CLASSES, imagenet_class_index, imagenet_names
from corruptgen.io.shown import scrub, shown_path
from corruptgen.wording import counted

from .base import Source, SourceItem, _one_line, _read_file, _sanitize_key, _unique_keys, refuse_build_dir

_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
_HF_LABEL_NAMES = ("label", "labels", "cls", "class", "target")


class HFSource(Source):
    """A Hugging Face ``datasets`` dataset; images are read as raw encoded bytes (``Image(decode=False)``)."""

    kind = "hf"
    _TRANSIENT = ("_handle",)

    @staticmethod
    def shown_rest(rest: str) -> str:
        """A local dataset's path as recorded (a Hub id as it is), and the split as written."""
        name, split = _parse_hf_spec(rest)
        if not os.path.exists(os.path.expanduser(name)):
            return rest
        return shown_path(name) + (f":{split}" if split is not None else "")

    def __init__(
        self,
        spec: str,
        name: str,
        split: str | None,
        *,
        image_column: str | None = None,
        label_column: str | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(spec, limit=limit)
        self.name = name
        self.split = split
        self.image_column = image_column
        self.label_column = label_column
        expanded = os.path.expanduser(name)
        self.local_path = os.path.abspath(expanded) if os.path.exists(expanded) else None
        #: the name recorded in sample ids and skip reasons: a local dataset's folder name, never its path
        self.shown_name = os.path.basename(os.path.normpath(self.local_path)) if self.local_path else name
        self.from_disk = self.local_path is not None and _is_saved_dataset(self.local_path)
        self.num_rows: int | None = None
        self.fingerprint = ""
        self._handle: Any = None

    def _scan(self) -> list[SourceItem]:
        ds = self._load()
        self.image_column = self._pick_image_column(ds)
        self.label_column = self._pick_label_column(ds)
        self._handle = self._make_image_handle(ds)
        self.num_rows = n = len(ds)
        self.fingerprint = str(getattr(ds, "_fingerprint", "") or "")  # datasets' hash of the data and its history
        split = str(self.split)
        count = n if self.limit is None else min(n, self.limit)
        labels, label_names = self._read_labels(ds, count, split)
        if "__key__" in ds.column_names:
            raw = [str(k) for k in ds["__key__"]]
            keys = _unique_keys([_sanitize_key(k) for k in raw], [str(i) for i in range(n)])[:count]
        else:
            keys = [f"{_sanitize_key(split)}_{row:08d}" for row in range(count)]
        return [
            SourceItem(keys[row], f"hf:{self.shown_name}:{split}:{row}", labels[row], label_names[row])
            for row in range(count)
        ]

    def _load(self) -> Any:
        """Loads the dataset (resolving ``self.split``), mapping every failure to CorruptgenError."""
        import datasets

        if self.local_path is not None:  # a folder load_dataset lists recursively may hold a build: refused
            refuse_build_dir(self.local_path, f"hf: {self.name}", below=not self.from_disk)
        try:
            if self.from_disk:
                ds = datasets.load_from_disk(self.local_path)
                if isinstance(ds, datasets.DatasetDict):
                    self.split = self._choose_split(list(ds), self.split)
                    return ds[self.split]
                if self.split is not None and ds.split is not None and str(ds.split) != self.split:
                    raise CorruptgenError(f"hf: {self.name} holds only split {ds.split!r}, not {self.split!r}")
                self.split = str(ds.split) if ds.split is not None else (self.split or "all")
                return ds
            target = self.local_path or self.name
            if self.split is None:
                self.split = self._choose_split(datasets.get_dataset_split_names(target), None)
            return datasets.load_dataset(target, split=self.split)
        except CorruptgenError:
            raise
        except Exception as exc:
            raise CorruptgenError(f"hf: cannot load dataset {self.name!r}: {_one_line(exc)}") from exc

    def _choose_split(self, splits: list[str], wanted: str | None) -> str:
        if wanted is not None:
            if wanted not in splits:
                raise CorruptgenError(f"hf: {self.name} has no split {wanted!r}; splits: {', '.join(splits)}")
            return wanted
        for preferred in ("test", "validation"):
            if preferred in splits:
                return preferred
        if len(splits) == 1:
            return splits[0]
        listed = ", ".join(splits)
        raise CorruptgenError(f"hf: {self.name} has several splits, pick one with hf:<name>:<split>: {listed}")

    def _pick_image_column(self, ds: Any) -> str:
        import datasets

        columns = ", ".join(ds.column_names)
        if self.image_column is not None:
            if self.image_column not in ds.column_names:
                raise CorruptgenError(f"hf: image column {self.image_column!r} not found; columns: {columns}")
            feature = ds.features[self.image_column]
            binary = isinstance(feature, datasets.Value) and feature.dtype in ("binary", "large_binary")
            if not (isinstance(feature, datasets.Image) or binary):
                raise CorruptgenError(f"hf: column {self.image_column!r} is not an image column ({feature})")
            return self.image_column
        for column, feature in ds.features.items():
            if isinstance(feature, datasets.Image):
                return column
        raise CorruptgenError(f"hf: no image column in {self.name}; pass --image-column, columns: {columns}")

    def _pick_label_column(self, ds: Any) -> str | None:
        import datasets

        if self.label_column is not None:
            if self.label_column not in ds.column_names:
                columns = ", ".join(ds.column_names)
                raise CorruptgenError(f"hf: label column {self.label_column!r} not found; columns: {columns}")
            if not _is_int_label_feature(ds.features[self.label_column]):
                raise CorruptgenError(f"hf: label column {self.label_column!r} must hold integers")
            return self.label_column
        for column, feature in ds.features.items():
            if isinstance(feature, datasets.ClassLabel):
                return column
        for column in _HF_LABEL_NAMES:
            if column in ds.features and _is_int_label_feature(ds.features[column]):
                return column
        return None

    def _read_labels(self, ds: Any, count: int, split: str) -> tuple[list[int | None], list[str | None]]:
        """Labels and class names of the first ``count`` rows. A ``ClassLabel`` declares the class count; one whose
        names are ImageNet-1k wnids (``load_dataset("imagefolder")`` of a wnid tree indexes the folders it found) gives
        the fixed 1,000-class index instead, and rows of another class are skipped."""
        import datasets

        if self.label_column is None:
            return [None] * count, [None] * count
        self.labelled = True
        feature = ds.features[self.label_column]
        class_names = feature.names if isinstance(feature, datasets.ClassLabel) else None
        values = ds.select_columns([self.label_column])[:count][self.label_column]
        labels = [int(v) if v is not None and int(v) >= 0 else None for v in values]
        if not class_names:
            return labels, [None] * count
        bad = self._outside(labels, len(class_names))
        if bad is not None:
            raise self._label_error(labels[bad], f"hf:{self.name}:{split}:{bad}", len(class_names))
        self.num_classes = len(class_names)
        wnids = imagenet_class_index(class_names)
        if wnids is None:
            return labels, [None if v is None else class_names[v] for v in labels]
        self.num_classes, names = NUM_CLASSES, imagenet_names()
        remapped = [None if v is None else wnids.get(class_names[v]) for v in labels]
        self.problems = {row: f"class {class_names[v]} is not an ImageNet-1k class (wnid): no label"
                         for row, (v, new) in enumerate(zip(labels, remapped, strict=True))
                         if v is not None and new is None}  # fmt: skip
        if self.problems:
            rows = counted(len(self.problems), "row")
            self.notes.append(f"hf: {rows} of classes that are not ImageNet-1k wnids skipped")
        return remapped, [None if v is None else names[v] for v in remapped]

    def _make_image_handle(self, ds: Any) -> Any:
        """The dataset reduced to the image column, with image decoding off (raw bytes/paths)."""
        import datasets

        ds = ds.select_columns([self.image_column])
        if isinstance(ds.features[self.image_column], datasets.Image):
            ds = ds.cast_column(self.image_column, datasets.Image(decode=False))
        return ds

    def _image_handle(self) -> Any:
        if self.__dict__.get("_handle") is None:
            self._handle = self._make_image_handle(self._load())
        return self._handle

    def _read(self, index: int, max_bytes: int) -> bytes:
        try:
            entry = self._image_handle()[index][self.image_column]
        except CorruptgenError as exc:
            raise BadImageError(str(exc)) from exc
        except Exception as exc:  # an OSError (a network or disk read) may succeed on the next run
            reason = f"cannot read row {index} of {self.shown_name}: {self._shown(_one_line(exc))}"
            raise BadImageError(reason, transient=isinstance(exc, OSError)) from exc
        if isinstance(entry, bytes | bytearray | memoryview):
            return bytes(entry)
        if isinstance(entry, dict) and entry.get("bytes"):
            return bytes(entry["bytes"])
        if isinstance(entry, dict) and entry.get("path"):
            return self._read_entry_path(entry["path"], max_bytes)
        raise BadImageError(f"row {index} of {self.shown_name} has no image data")

    def _read_entry_path(self, path: str, max_bytes: int) -> bytes:
        if not os.path.isabs(path) and self.local_path and not os.path.exists(path):
            path = os.path.join(self.local_path, path)
        return _read_file(path, self._shown(path), max_bytes)

    def _shown(self, text: str) -> str:
        """``text`` (a skip reason, which a build records) with a file inside the local dataset's folder relative to
        it, and any other absolute path by its last component."""
        if self.local_path and text.startswith(self.local_path + os.sep):
            return os.path.relpath(text, self.local_path).replace(os.sep, "/")
        return scrub(text)

    def identity(self, index: int) -> str:
        """The dataset's fingerprint (``datasets`` changes it when the data changes)."""
        self.items()
        return self.fingerprint

    def _describe_extra(self) -> dict:
        return {
            "name": self.name if self.local_path is None else shown_path(self.name),
            "local": self.local_path is not None,
            "split": self.split,
            "image_column": self.image_column,
            "label_column": self.label_column,
            "num_rows": self.num_rows,
        }


def _is_saved_dataset(path: str) -> bool:
    """True for a directory written by ``save_to_disk`` (Dataset or DatasetDict)."""
    return any(os.path.isfile(os.path.join(path, f)) for f in ("dataset_dict.json", "state.json"))


def _is_int_label_feature(feature: Any) -> bool:
    import datasets

    if isinstance(feature, datasets.ClassLabel):
        return True
    return isinstance(feature, datasets.Value) and feature.dtype.startswith(("int", "uint"))


def _parse_hf_spec(rest: str) -> tuple[str, str | None]:
    """Splits ``<name-or-path>[:<split>]`` on the last ":" unless the whole string is an existing path or the tail
    cannot be a split name (keeps ``C:\\data`` style paths intact)."""
    if os.path.exists(os.path.expanduser(rest)) or ":" not in rest:
        return rest, None
    head, tail = rest.rsplit(":", 1)
    if head and _SPLIT_NAME.match(tail) and not (len(head) == 1 and head.isalpha() and not tail):
        return head, tail
    return rest, None
