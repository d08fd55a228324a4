"""Remake ``docs/gallery.png`` (the README's screenshot of ``corruptgen gallery``) in headless Chromium.

    python scripts/gallery_screenshot.py [--out docs/gallery.png]

Builds ImageNet-C (three corruptions at severities 1, 3, 5) from three sample photos in a temporary folder, writes
its gallery, opens it in Debian's ``chromium`` through ``chromedriver`` (Selenium) and saves the grid and, below
it, the viewer after a click, as one small palette PNG.
"""

from __future__ import annotations

import argparse
import io
import shutil
import tempfile
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "gallery.png"))
    args = parser.parse_args()
    from PIL import Image
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    import corruptgen

    with tempfile.TemporaryDirectory() as tmp:
        corruptgen.build("imagenet-c", out=tmp, subsets="gaussian_noise,motion_blur,frost", severities="1,3,5",
                         limit=3, progress=False)  # fmt: skip
        site = corruptgen.gallery(Path(tmp) / "imagenet-c", Path(tmp) / "site", per_subset=2)
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for flag in (*FLAGS, f"--user-data-dir={tmp}/profile", "--window-size=1100,640"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            driver.get(site.index.as_uri())
            driver.execute_script("document.getElementById('grid').scrollIntoView()")
            grid = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
            driver.find_element(By.CSS_SELECTOR, 'a.thumb[data-subset="frost_s3"][data-key="chelsea"]').click()
            viewer = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
        finally:
            driver.quit()
    both = Image.new("RGB", (grid.width, grid.height + viewer.height + 8), "white")
    both.paste(grid, (0, 0))
    both.paste(viewer, (0, grid.height + 8))
    both = both.resize((both.width * 3 // 5, both.height * 3 // 5), Image.Resampling.LANCZOS)
    both.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(args.out, optimize=True)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
