"""A screenshot of an exported HTML figure in a browser, as its reader sees it.

    python tools/html_screenshot.py [--example attention] [--out docs/html-export.png]

Renders the example to HTML (``render … -o FIG.html``), opens it in headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, Selenium) at 1366 × 768, hovers one point
so that its tooltip shows, and saves the window.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--example", default="attention")
    parser.add_argument("--point", default="Decode, GQA (8 KV heads)",
                        help="the operation whose point is hovered")
    parser.add_argument("--out", default=str(ROOT / "docs" / "html-export.png"))
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains

    from workbench.cli import main as cli

    with tempfile.TemporaryDirectory(prefix="roofline-html-") as folder:
        page = Path(folder) / f"{args.example}.html"
        session = ROOT / "workbench" / "examples" / f"{args.example}.yaml"
        if cli(["render", str(session), "-o", str(page)]) != 0:
            return 1
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False})
            driver.get(page.as_uri())
            spot = driver.execute_script("""
                const data = JSON.parse(document.getElementById('figure-data').textContent);
                const name = arguments[0];
                const key = Object.keys(data.points).find(
                    k => data.strings[data.points[k][2]] === name);
                return Array.from(document.querySelectorAll('.rw-pt'))
                    .find(e => e.getAttribute('data-pts').split(' ').includes(key));""",
                                         args.point)
            if spot is None:
                print(f"no point of {args.point!r} in {args.example}", file=sys.stderr)
                return 1
            ActionChains(driver).move_to_element(spot).perform()
            driver.save_screenshot(args.out)
        finally:
            driver.quit()
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
