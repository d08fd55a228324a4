"""The build command is recorded in the manifest (CLI and Python API alike) and the card shows exactly it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import corruptgen
from corruptgen.engine.invocation import command, record


def test_record_keeps_what_differs_from_the_defaults():
    rec = record("imagenet-c", {"source": "samples", "subsets": "frost", "clean": True, "limit": 2, "seed": 0,
                                "severities": [1, 3], "extra": False, "quality": 85})  # fmt: skip
    assert rec["arguments"] == {"subsets": "frost", "limit": 2, "severities": [1, 3]}
    assert rec["command"] == "corruptgen build imagenet-c --subsets frost --limit 2 --severities 1,3"
    assert command("syn2nat", {"source": "webdataset:{a,b}.tar", "clean": False}) == (
        "corruptgen build syn2nat --source 'webdataset:{a,b}.tar' --no-clean"
    )


def test_cli_and_api_record_the_same_invocation_and_the_card_shows_it(tmp_path):
    args = ["imagenet-c", "--subsets", "frost", "--limit", "1", "--no-clean", "--severities", "1,3"]
    subprocess.run([sys.executable, "-m", "corruptgen", "build", *args, "--out", str(tmp_path / "cli"),
                    "--no-progress"], check=True, capture_output=True)  # fmt: skip
    corruptgen.build("imagenet-c", subsets="frost", severities="1,3", limit=1, clean=False, out=tmp_path / "api")
    cli = json.loads((tmp_path / "cli" / "imagenet-c" / "manifest.json").read_text())["invocation"]
    api = json.loads((tmp_path / "api" / "imagenet-c" / "manifest.json").read_text())["invocation"]
    assert cli == api
    assert shlex.split(cli["command"])[2:] == args
    card = (tmp_path / "cli" / "imagenet-c" / "README.md").read_text()
    assert cli["command"].replace("imagenet-c ", "imagenet-c --source samples ", 1) in card
