"""The gallery in a real browser: headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven by
Selenium) opens the page from a build of the sample photos, finds every cell's images loaded, opens the viewer by a
click, moves with the arrow keys and takes a screenshot that must not be blank; no console errors (a Content
Security Policy violation would be one) and no request leaves the page's folder."""

from __future__ import annotations

import io
import json
import shutil
import tempfile

import pytest
from site_reading import site_record

import corruptgen

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = (
    *("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"),
    *("--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1200,900"),
)

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="no headless Chromium: apt-get install -y chromium chromium-driver (.ci/run installs them)",
)


@pytest.fixture
def browser(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e .[test])")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _loaded(driver, selector: str) -> list[int]:
    """naturalWidth of every image matching ``selector``, once all of them finished loading."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = f"return [...document.querySelectorAll({selector!r})]"
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(script + ".every(i => i.complete)"))
    return driver.execute_script(script + ".map(i => i.naturalWidth)")


def test_the_page_loads_every_image_and_the_viewer_opens_by_a_click(icb, tmp_path, browser):
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    site = tmp_path / "site"
    corruptgen.gallery(icb, site, per_subset=2)
    browser.get((site / "index.html").as_uri())
    widths = _loaded(browser, "#grid-table img")
    assert len(widths) == len(site_record(site)["samples"]) == 12 and min(widths) > 0
    cells = browser.execute_script("return [...document.querySelectorAll('td.cell')].map(c => c.querySelectorAll("
                                   "'img').length)")  # fmt: skip
    assert cells and min(cells) == 2  # every cell of this build holds its two photos

    viewer = browser.find_element(By.ID, "viewer")
    assert not viewer.is_displayed()
    browser.find_element(By.CSS_SELECTOR, 'a.thumb[data-subset="gaussian_noise_s1"][data-key="chelsea"]').click()
    assert viewer.is_displayed() and viewer.get_attribute("data-subset") == "gaussian_noise_s1"
    assert min(_loaded(browser, "#viewer img[src]")) > 0  # the image, its clean twin and the difference pair
    assert "tabby cat" in browser.find_element(By.ID, "viewer-json").text
    body = browser.find_element(By.TAG_NAME, "body")
    for key, subset in ((Keys.ARROW_RIGHT, "gaussian_noise_s3"), (Keys.ARROW_DOWN, "frost_s3"),
                        (Keys.ARROW_LEFT, "frost_s1"), (Keys.ARROW_LEFT, "clean")):  # fmt: skip
        body.send_keys(key)
        assert (viewer.get_attribute("data-subset"), viewer.get_attribute("data-key")) == (subset, "chelsea")
    shot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
    assert shot.size[0] >= 800 and len(shot.getcolors(1 << 24)) > 500  # photos on screen, not a blank page
    body.send_keys(Keys.ESCAPE)
    assert not viewer.is_displayed()

    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    sent = [e["params"] for e in events if e["method"] == "Network.requestWillBeSent"]
    urls = {p["request"]["url"] for p in sent if p.get("documentURL", "").startswith(site.as_uri())}
    assert len(urls) > 12 and all(u.startswith(site.as_uri() + "/") for u in urls), urls  # the page's own files
