"""``imagefolder:<path>`` source: a directory tree of image files (ImageNet wnid folders, generic class folders, a
flat ``ILSVRC2012_val_*`` folder, or any flat folder)."""

from __future__ import annotations

import os

from corruptgen.errors import CorruptgenError
from corruptgen.io.labels import NUM_CLASSES, imagenet_class_index, imagenet_names, imagenet_val_labels, imagenet_wnids
from corruptgen.io.layout import IMAGE_EXTENSIONS
from corruptgen.io.shown import shown_path
from corruptgen.wording import counted, some

from .base import Source, SourceItem, _path_keys, _read_file, file_identity, is_build_dir, refuse_build_dir


class ImageFolderSource(Source):
    """A directory tree of image files, listed recursively by extension (content is not pre-validated).

    Hidden files and folders (name starting with ".") are skipped; symlinked folders are followed (cycles pruned).
    Layouts: ``<wnid>/<file>`` with (at least half of) the top-level folders ImageNet-1k wnids (labels from the fixed
    1,000-class index; images in any other folder are skipped with their reason), generic ``<class>/<file>`` folders
    (label = index of the sorted class names), a flat folder of ``ILSVRC2012_val_*`` files (official validation
    labels), or anything else (unlabelled). Class layouts require that no image lies directly in the root folder.
    Folders of which some but fewer than half are wnids are refused (a typo such as ``n0244O764`` would otherwise
    renumber every class) unless ``folder_labels`` (``--folder-labels``): class folders labelled by their sorted
    order, whatever their names.
    """

    kind = "imagefolder"
    shown_rest = staticmethod(shown_path)

    def __init__(self, spec: str, path: str, *, limit: int | None = None) -> None:
        super().__init__(spec, limit=limit)
        self.folder_labels = False  # class folders labelled by sorted order, no wnid look-up (set before the scan)
        self.path = path
        self.root = os.path.abspath(os.path.expanduser(path))
        self.layout = "flat"
        self.num_classes: int | None = None
        self.build_dirs: list[str] = []  # corruptgen build directories inside the folder: never read

    def _scan(self) -> list[SourceItem]:
        if not os.path.exists(self.root):
            raise CorruptgenError(f"imagefolder: path does not exist: {self.path}")
        if not os.path.isdir(self.root):
            raise CorruptgenError(f"imagefolder: not a directory: {self.path}")
        refuse_build_dir(self.root, f"imagefolder: {self.path}")
        relpaths, self.build_dirs = _list_images(self.root)
        if not relpaths:
            exts = ", ".join(sorted(IMAGE_EXTENSIONS))
            raise CorruptgenError(f"imagefolder: no image files ({exts}) found under {self.path}")
        labels = self._labels(relpaths)
        self.problems.update(self._unlabelled(relpaths, labels))
        keys = _path_keys(relpaths)
        return [SourceItem(key, rel, *label) for key, rel, label in zip(keys, relpaths, labels, strict=True)]

    def _labels(self, relpaths: list[str], folders: list[str] | None = None) -> list[tuple[int | None, str | None]]:
        """(label, name) of each path by the layout rules; generic class folders are indexed among ``folders``
        (default: the top-level folders of ``relpaths``)."""
        parts = [rel.split("/", 1) for rel in relpaths]
        classes = sorted({p[0] for p in parts if len(p) == 2})
        if classes and all(len(p) == 2 for p in parts):
            self.labelled = True
            if self.folder_labels:
                return self._sorted_folders(parts, sorted(set(folders)) if folders is not None else classes)
            wnids = imagenet_class_index(classes)
            if wnids is None:
                self._refuse_mixed(classes)
            if wnids is not None:  # the fixed 1,000-class index: a missing or mistyped folder shifts nothing
                self.layout, self.num_classes, names = "imagenet-wnid", NUM_CLASSES, imagenet_names()
                return [(wnids[p[0]], names[wnids[p[0]]]) if p[0] in wnids else (None, None) for p in parts]
            classes = sorted(set(folders)) if folders is not None else classes
            if all(c.isascii() and c.isdigit() for c in classes):  # ImageNetV2-style "0".."999": the name is the label
                index = {c: int(c) for c in classes}
                self.layout, self.num_classes = "numbered-class-folders", max(index.values()) + 1
                return [(index[p[0]], p[0]) if p[0] in index else (None, None) for p in parts]
            return self._sorted_folders(parts, classes)
        basenames = [rel.rsplit("/", 1)[-1] for rel in relpaths]
        if all(b.startswith("ILSVRC2012_val_") for b in basenames):
            self.layout, self.labelled, self.num_classes = "imagenet-val", True, NUM_CLASSES
            table, names = imagenet_val_labels(), imagenet_names()
            labels = [table.get(os.path.splitext(b)[0] + ".JPEG") for b in basenames]
            return [(label, None if label is None else names[label]) for label in labels]
        self.layout = "flat"
        return [(None, None)] * len(relpaths)

    def _sorted_folders(self, parts: list[list[str]], classes: list[str]) -> list[tuple[int | None, str | None]]:
        """Generic class folders: label = position of the folder among the sorted ``classes``."""
        self.layout, self.num_classes = "class-folders", len(classes)
        index = {c: i for i, c in enumerate(classes)}
        return [(index[p[0]], p[0]) if p[0] in index else (None, None) for p in parts]

    def _refuse_mixed(self, classes: list[str]) -> None:
        """One line when some class folders are ImageNet-1k wnids but fewer than half: numbering them by sorted
        order would give ``n01440764`` another label than its ImageNet index without a word."""
        known = set(imagenet_wnids())
        odd = [c for c in classes if c not in known]
        if len(odd) == len(classes):
            return
        shown = some(odd)
        raise CorruptgenError(
            f"{self.kind}: {self.path}: {len(classes) - len(odd)} of {len(classes)} class folders are ImageNet-1k "
            f"wnids but {len(odd)} are not ({shown}): rename or remove those, or pass --folder-labels to label "
            "every folder by its sorted position"
        )

    def _unlabelled(self, relpaths: list[str], labels: list[tuple[int | None, str | None]]) -> dict[int, str]:
        """The items of a wnid layout outside the 1,000 ImageNet classes (index -> reason), noted once per folder."""
        if self.layout != "imagenet-wnid":
            return {}
        folders = [rel.split("/", 1)[0] for rel in relpaths]
        skipped = {i: folders[i] for i, (label, _) in enumerate(labels) if label is None}
        if skipped:
            names = sorted(set(skipped.values()))
            self.notes.append(f"{self.kind}: {counted(len(skipped), 'image')} skipped, in "
                              f"{counted(len(names), 'folder')} not among the ImageNet-1k classes (wnids): "
                              f"{some(names)}")  # fmt: skip
        return {i: f"folder {folder} is not an ImageNet-1k class (wnid): no label" for i, folder in skipped.items()}

    def _read(self, index: int, max_bytes: int) -> bytes:
        rel = self._items[index].source_id
        return _read_file(os.path.join(self.root, *rel.split("/")), rel, max_bytes)

    def identity(self, index: int) -> str:
        """The file's size and modification time."""
        return file_identity(os.path.join(self.root, *self.items()[index].source_id.split("/")))

    def _describe_extra(self) -> dict:
        left_out = {"build_dirs_left_out": self.build_dirs} if self.build_dirs else {}
        return {"path": shown_path(self.path), "layout": self.layout, "num_classes": self.num_classes, **left_out}


def _list_images(root: str) -> tuple[list[str], list[str]]:
    """Sorted relative POSIX paths of image files (by extension) under ``root``, and the relative paths of the
    corruptgen build directories left out (e.g. the output of a build whose ``--out`` is inside ``root``)."""
    found, builds = [], []
    visited = {os.path.realpath(root)}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        if is_build_dir(dirpath, filenames):
            dirnames[:] = []
            builds.append(os.path.relpath(dirpath, root).replace(os.sep, "/"))
            continue
        kept = []
        for name in sorted(dirnames):
            real = os.path.realpath(os.path.join(dirpath, name))
            if not name.startswith(".") and real not in visited:
                visited.add(real)
                kept.append(name)
        dirnames[:] = kept
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            ext = os.path.splitext(name)[1][1:].lower()
            if name.startswith(".") or ext not in IMAGE_EXTENSIONS:
                continue
            rel = name if rel_dir == "." else os.path.join(rel_dir, name)
            found.append(rel.replace(os.sep, "/"))
    return sorted(found), sorted(builds)
