"""The dataset a :func:`~corruptgen.hub.stream.torch_loader` iterates: webdataset's pipeline with its exact batch
count as ``len()``, in a class that pickles (webdataset's ``with_length`` makes a class at run time, which does not),
so that DataLoader workers start without forking the caller. Imported when a loader is made (it imports torch)."""

from __future__ import annotations

import webdataset as wds


class SizedPipeline(wds.DataPipeline):
    """``wds.DataPipeline(*stages)`` whose ``len()`` is ``length`` (the batches it yields per epoch)."""

    def __init__(self, *stages, length: int) -> None:
        super().__init__(*stages)
        self.size = length

    def __len__(self) -> int:
        return self.size
