"""A figure exported as HTML, driven in a real browser (Debian's ``chromium`` through its
``chromedriver`` and Selenium; CI installs them, see ``.ci/run``): what a person opening the
file sees and does. The numbers it shows are held against ``analyze --format json``.

One browser serves the whole module. Without Chromium these tests fail (they are never
skipped): the page's script is only tested here.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from tests.conftest import ROOT
from workbench.cli import main as cli
from workbench.model.units import format_quantity

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
VIEWPORT = (1366, 768)
HOSTILE_OP = "</script><script>window.pwned=1;alert(1)</script>"
HOSTILE_OP2 = '"><img src=x onerror="window.pwned=2;alert(2)">'
HOSTILE_TITLE = "<b onmouseover=alert(3)>title</b> & </title><script>window.pwned=3</script>"


def _analyze(session: Path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli(["analyze", str(session), "--format", "json"]) == 0
    return json.loads(out.getvalue())


def _render(session: Path, target: Path, *args: str) -> Path:
    assert cli(["render", str(session), "-o", str(target), *args]) == 0
    return target


def _hostile_session(folder: Path) -> Path:
    """The attention example with names and a title that are markup and script."""
    from workbench.io.sessions import dumps_session, load_session

    session = load_session(ROOT / "workbench" / "examples" / "attention.yaml")
    session.title = HOSTILE_TITLE
    renamed = {}
    for entry, name in zip(session.operations, (HOSTILE_OP, HOSTILE_OP2), strict=False):
        renamed[entry.operation.name] = name
        entry.operation.name = name
    for pair in session.comparisons:  # (they name the operations they compare)
        pair.first = renamed.get(pair.first, pair.first)
        pair.second = renamed.get(pair.second, pair.second)
    path = folder / "hostile.yaml"
    path.write_text(dumps_session(session), encoding="utf-8")
    return path


def _profiled_session(folder: Path) -> Path:
    """Ten kernels of a BERT step from an Nsight Compute export on an A100: C++ signatures,
    tagged K1, K2, … in the figure and its table."""
    from workbench.io.measurements import attach_measurements, import_measurements
    from workbench.io.sessions import dumps_session, loads_session

    session = loads_session("schema_version: 2\ntitle: BERT kernels\nhardware:\n"
                            "  - preset: a100-80gb\n", "profiled.yaml")
    profile = ROOT / "tests" / "fixtures" / "ncu_details_a100_bert_flashattn.csv"
    attach_measurements(session, import_measurements(profile, "a100-80gb").measurements)
    path = folder / "profiled.yaml"
    path.write_text(dumps_session(session), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The exported pages (``render … -o FIG.html``) and ``analyze`` of their sessions."""
    folder = tmp_path_factory.mktemp("html")
    examples = ROOT / "workbench" / "examples"
    out = {}
    for name, session, args in (
            ("attention", examples / "attention.yaml", ()),
            ("kernels", examples / "real_kernels_h100_h200.yaml", ()),
            ("kernels_single", examples / "real_kernels_h100_h200.yaml", ("--size", "single")),
            ("hostile", _hostile_session(folder), ())):
        out[name] = (_render(session, folder / f"{name}.html", *args), _analyze(session),
                     session)
    return out


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module, the viewport 1366 × 768, its console and
    network logged. Never the network for the driver itself (Selenium Manager is not asked:
    the driver's path is given)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    if missing:
        pytest.fail(f"the browser tests need Debian's chromium and chromium-driver: missing "
                    f"{', '.join(missing)} (apt-get install chromium chromium-driver)")
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # (Selenium Manager, were it asked: no network)
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False})
    yield driver
    driver.quit()


def _open_page(browser, page: Path) -> None:
    """Open ``page`` afresh: its console and network logs are its own."""
    browser.get("about:blank")
    browser.get_log("browser")  # (what came before this page)
    browser.get_log("performance")
    browser.get(page.as_uri())


def _visible(browser, selector: str):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".filter(e => getComputedStyle(e).display !== 'none' && !e.closest('[hidden]'))",
        selector)


def _point_keys(browser) -> list[str]:
    return [k for el in _visible(browser, ".rw-pt") for k in el.get_attribute("data-pts").split()]


def _result(analysis: dict, operation: str, machine: str) -> dict:
    [r] = [r for r in analysis["results"]
           if r["operation"] == operation and r["hardware"] == machine]
    return r


def _hover(browser, element) -> list[str]:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).move_to_element(element).perform()
    tip = browser.find_element("id", "tip")
    assert tip.is_displayed()
    return tip.text.split("\n")


def _page_data(browser) -> dict:
    return json.loads(browser.find_element("id", "figure-data").get_attribute("textContent"))


# ---------------------------------------------------------------------------------------------


def test_every_result_is_one_point_and_one_row(browser, pages):
    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    data = _page_data(browser)
    keys = _point_keys(browser)
    assert len(keys) == len(set(keys)) == len(analysis["results"]) == 8
    rows = browser.find_elements("css selector", "#results tbody tr")
    assert len(rows) == 8
    named = {(data["strings"][data["points"][k][2]], data["strings"][data["points"][k][3]])
             for k in keys}
    assert named == {(r["operation"], r["hardware"]) for r in analysis["results"]}
    assert not browser.get_log("browser")  # no script error, nothing refused


@pytest.mark.parametrize("operation, machine", [
    ("Prefill, naive", "NVIDIA H100 SXM5 80GB"),
    ("Decode, GQA (8 KV heads)", "NVIDIA H200 SXM 141GB"),
])
def test_a_hover_tells_the_numbers_of_analyze(browser, pages, operation, machine):
    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    data = _page_data(browser)
    strings = data["strings"]
    [key] = [k for k, row in data["points"].items()
             if (strings[row[2]], strings[row[3]]) == (operation, machine)]
    [spot] = [el for el in _visible(browser, ".rw-pt")
              if key in el.get_attribute("data-pts").split()]
    lines = _hover(browser, spot)
    r = _result(analysis, operation, machine)
    assert lines[0] == operation
    assert lines[1] == f"on {machine}"
    expected = [
        f"FLOPs: {format_quantity(r['flops'], 'flops')}",
        f"Bytes: {format_quantity(r['bytes'], 'bytes')}",
        f"Intensity: {format_quantity(r['intensity'], 'intensity')} (across {r['level']})",
        f"Bound: {r['bound']}",
        f"T_lower: {format_quantity(r['t_lower_s'], 'time')}",
        f"Predicted time: {format_quantity(r['t_predicted_s'], 'time')}",
    ]
    for line in expected:
        assert line in lines
    assert any(line.startswith(f"Attainable: {format_quantity(r['attainable_flops'], 'flop_rate')}")
               for line in lines)
    # the derivation's lines: attainable = min(peak, I × bandwidth), with this point's numbers
    attainable = next(line for line in lines if line.startswith("attainable: min(peak, I × bandwidth)"))
    assert attainable.split(" = ")[-1].startswith(format_quantity(r["attainable_flops"], "flop_rate"))
    assert f"{format_quantity(r['peak_flops'], 'flop_rate')}" in attainable
    assert f"{format_quantity(r['bandwidth'], 'bandwidth')}" in attainable


def test_hovering_a_roof_and_a_ridge_tells_their_formula(browser, pages):
    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    hits = browser.find_elements("css selector", ".rw-hit[fill='transparent']")
    assert len(hits) == 2  # a ridge on each machine
    lines = _hover(browser, hits[0])
    assert any(line.startswith("ridge = peak / bandwidth = ") for line in lines)
    ridges = {format_quantity(r["ridge"], "intensity") for r in analysis["results"]}
    assert lines[-1].split(" = ")[-1] in ridges


def test_hiding_a_machine_takes_its_points_and_rows_away(browser, pages):
    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    h200 = "NVIDIA H200 SXM 141GB"
    on_h200 = sum(r["hardware"] == h200 for r in analysis["results"])
    assert on_h200 == 4
    button = next(b for b in browser.find_elements("css selector", "#key button.toggle")
                  if b.text == h200)
    button.click()
    data = _page_data(browser)
    h200_id = next(m["id"] for m in data["machines"] if m["name"] == h200)
    every = [el.get_attribute("data-pts").split()
             for el in browser.find_elements("css selector", ".rw-pt")]
    shown = [el.get_attribute("data-pts").split() for el in _visible(browser, ".rw-pt")]
    on_it = [keys for keys in every if all(k.endswith(f":{h200_id}") for k in keys)]
    assert on_it and not any(keys in shown for keys in on_it)  # its own points are gone
    # a spot it shares with the other machine stays, for the other machine's point
    assert len(shown) == len(every) - len(on_it)
    assert {k for keys in shown for k in keys if not k.endswith(f":{h200_id}")} == {
        k for keys in every for k in keys if not k.endswith(f":{h200_id}")}
    assert len(_visible(browser, "#results tbody tr")) == 8 - on_h200
    roofs = _visible(browser, ".rw-roof")
    assert roofs and all(r.get_attribute("data-hw") != str(h200_id) for r in roofs)
    # an operation hidden takes its name off the chart too
    flash = next(o["id"] for o in data["operations"] if o["name"] == "Prefill, Flash")
    names = [t.text for t in _visible(browser, "#figure svg text")]
    assert "Prefill, Flash" in names
    next(b for b in browser.find_elements("css selector", "#key button.toggle")
         if b.text == "Prefill, Flash").click()
    assert "Prefill, Flash" not in [t.text for t in _visible(browser, "#figure svg text")]
    assert not any(k.startswith(f"{flash}:") for k in _point_keys(browser))
    next(b for b in browser.find_elements("css selector", "#key button.toggle")
         if b.text == "Prefill, Flash").click()
    button.click()  # and back
    assert len(_point_keys(browser)) == 8
    # "only" isolates it; a second "only" shows every machine again
    only = button.find_element("xpath", "following-sibling::button")
    only.click()
    assert all(any(k.endswith(f":{h200_id}") for k in el.get_attribute("data-pts").split())
               for el in _visible(browser, ".rw-pt"))
    assert len(_visible(browser, "#results tbody tr")) == on_h200
    only.click()
    assert len(_point_keys(browser)) == 8
    # the figure's own legend: its row of the machine hides the machine too
    [row] = [t for t in browser.find_elements("css selector", "#figure svg text.rw-legend")
             if t.text == h200]
    row.click()
    assert button.get_attribute("aria-pressed") == "false"
    assert len(_visible(browser, "#results tbody tr")) == 8 - on_h200
    assert not browser.get_log("browser")


def test_a_hidden_rows_legend_text_is_struck_through_and_dimmed(browser, pages):
    """A row of the figure's own legend clicked hides its machine, and says so: its text is
    struck through and lighter (it looked the same, as if nothing were hidden); a second
    click shows the machine and the row as before."""
    import numpy as np
    from PySide6.QtGui import QImage

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    [row] = [t for t in browser.find_elements("css selector", "#figure svg text.rw-legend")
             if t.text == "NVIDIA H200 SXM 141GB"]

    def ink() -> float:
        """How dark the row's text is on screen (the mean darkness of its box)."""
        b = browser.execute_script("var r = arguments[0].getBoundingClientRect();"
                                   "return [r.left, r.top, r.right, r.bottom].map(Math.round)", row)
        image = QImage.fromData(browser.get_screenshot_as_png()).convertToFormat(
            QImage.Format.Format_Grayscale8)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
            image.height(), image.bytesPerLine())
        return float(255 - pixels[b[1]:b[3], b[0]:b[2]].mean())

    def struck() -> bool:
        return "line-through" in row.value_of_css_property("text-decoration-line")

    shown = ink()
    assert not struck()
    row.click()
    assert len(_point_keys(browser)) == 4  # (its machine hidden)
    assert struck() and ink() < 0.7 * shown
    row.click()
    assert len(_point_keys(browser)) == 8
    assert not struck() and ink() == pytest.approx(shown, rel=0.02)
    assert not browser.get_log("browser")


def test_hiding_an_operation_takes_its_name_and_its_leader_away(browser, pages):
    """A name placed away from its point, a leader joining them: hiding the operation hides
    both (the leader was left pointing at the emptied place before)."""
    page, _, _ = pages["kernels"]
    _open_page(browser, page)
    leaders = _visible(browser, ".rw-leader")
    assert leaders
    op = leaders[0].get_attribute("data-op")
    name = next(o["name"] for o in _page_data(browser)["operations"] if str(o["id"]) == op)
    toggle = next(b for b in browser.find_elements("css selector", "#key button.toggle")
                  if b.text == name)

    def shown() -> tuple[int, int]:
        return (sum(el.get_attribute("data-op") == op for el in _visible(browser, ".rw-leader")),
                sum(el.get_attribute("data-op") == op for el in _visible(browser, ".rw-label")))

    assert shown() == (1, 1)
    toggle.click()
    assert shown() == (0, 0)
    assert len(_visible(browser, ".rw-leader")) == len(leaders) - 1  # (the others stay)
    toggle.click()
    assert shown() == (1, 1)
    assert not browser.get_log("browser")


def test_the_table_sorts_by_a_column_and_back(browser, pages):
    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    heading = next(th for th in browser.find_elements("css selector", "#results th")
                   if th.text == "T_lower")
    heading.click()
    data = _page_data(browser)
    strings = data["strings"]

    def shown_order():
        out = []
        for tr in browser.find_elements("css selector", "#results tbody tr"):
            row = data["points"][tr.get_attribute("data-pt")]
            out.append((strings[row[2]], strings[row[3]]))
        return out

    by_time = sorted(analysis["results"], key=lambda r: r["t_lower_s"])
    assert shown_order() == [(r["operation"], r["hardware"]) for r in by_time]
    assert heading.get_attribute("aria-sort") == "ascending"
    heading.click()
    assert [r["t_lower_s"] for r in (_result(analysis, *k) for k in shown_order())] == sorted(
        (r["t_lower_s"] for r in analysis["results"]), reverse=True)
    # the row under the cursor rings its point
    from selenium.webdriver.common.action_chains import ActionChains

    row = browser.find_elements("css selector", "#results tbody tr")[0]
    ActionChains(browser).move_to_element(row).perform()
    ring = browser.find_element("css selector", ".rw-ring")
    assert ring.get_attribute("display") == "inline"
    spot = next(el for el in _visible(browser, ".rw-pt")
                if row.get_attribute("data-pt") in el.get_attribute("data-pts").split())
    ring_box, spot_box = ring.rect, spot.rect
    assert abs((ring_box["x"] + ring_box["width"] / 2) - (spot_box["x"] + spot_box["width"] / 2)) < 2
    assert abs((ring_box["y"] + ring_box["height"] / 2) - (spot_box["y"] + spot_box["height"] / 2)) < 2


def test_the_slowest_measured_kernels_alone(browser, pages):
    page, analysis, _ = pages["kernels"]
    _open_page(browser, page)
    measured = analysis["measurements"]
    assert len(_visible(browser, ".rw-ms")) == len(measured) == 70
    box = browser.find_element("id", "topn")
    box.clear()
    box.send_keys("5")
    shown = _visible(browser, ".rw-ms")
    assert len(shown) == 5
    data = _page_data(browser)
    names = {data["strings"][data["measured"][el.get_attribute("data-ms")][2]] for el in shown}
    slowest = sorted(measured, key=lambda m: m["measured_time_s"], reverse=True)[:5]
    assert names == {m["name"] for m in slowest}
    assert len(_visible(browser, "#results tbody tr[data-ms]")) == 5
    assert not browser.get_log("browser")


def test_wheel_zooms_drag_pans_and_reset_restores(browser, pages):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")
    first = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg), 0, -300).perform()
    zoomed = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    assert zoomed[2] < first[2] and zoomed[3] < first[3]  # closer in
    ActionChains(browser).move_to_element_with_offset(svg, -200, 150).click_and_hold() \
        .move_by_offset(60, 0).move_by_offset(60, 0).release().perform()
    panned = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    assert panned[0] < zoomed[0] and panned[2] == zoomed[2]  # dragged right: left part shown
    browser.find_element("id", "reset").click()
    assert [float(v) for v in svg.get_dom_attribute("viewBox").split()] == first


def test_the_page_fetches_nothing_and_carries_its_session(browser, pages):
    from workbench.io.sessions import loads_session

    page, _analysis, session = pages["kernels"]
    _open_page(browser, page)
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).move_to_element(_visible(browser, ".rw-ms")[0]).perform()
    requests = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    assert requests and all(url.startswith(("file:", "data:")) for url in requests), requests
    assert all(not url.startswith("data:") for url in requests[1:])  # no image, font, script
    csp = browser.find_element("css selector", "meta[http-equiv='Content-Security-Policy']")
    assert "default-src 'none'" in csp.get_attribute("content")
    link = browser.find_element("link text", "Download session YAML")
    href = link.get_attribute("href")
    prefix = "data:application/x-yaml;charset=utf-8,"
    assert href.startswith(prefix) and link.get_attribute("download").endswith(".yaml")
    carried = loads_session(urllib.parse.unquote(href[len(prefix):]), "carried.yaml")
    original = loads_session(session.read_text(encoding="utf-8"), session.name)
    assert carried.title == original.title
    assert [e.operation.name for e in carried.operations] == [e.operation.name
                                                             for e in original.operations]
    assert len(carried.measurements) == len(original.measurements) == 70
    assert not browser.get_log("browser")


def test_hostile_names_are_shown_as_text_and_run_nothing(browser, pages):
    from selenium.common.exceptions import NoAlertPresentException

    page, analysis, _ = pages["hostile"]
    _open_page(browser, page)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (reading it asks for the dialog)
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.title == HOSTILE_TITLE
    cells = [td.text for td in browser.find_elements("css selector", "#results td")]
    assert HOSTILE_OP in cells and HOSTILE_OP2 in cells
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#figure svg text')).map(t => t.textContent)")
    assert any(HOSTILE_OP2 in t for t in texts)
    buttons = [b.text for b in browser.find_elements("css selector", "#key button.toggle")]
    assert HOSTILE_OP in buttons and HOSTILE_OP2 in buttons
    # its tooltip says the name as it is
    data = _page_data(browser)
    key = next(k for k, row in data["points"].items() if data["strings"][row[2]] == HOSTILE_OP2)
    spot = next(el for el in _visible(browser, ".rw-pt")
                if key in el.get_attribute("data-pts").split())
    lines = _hover(browser, spot)
    assert lines[0] == HOSTILE_OP2
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert {r["operation"] for r in analysis["results"]} >= {HOSTILE_OP, HOSTILE_OP2}


def test_without_javascript_the_figure_and_table_still_show(browser, pages):
    page, analysis, _ = pages["attention"]
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        _open_page(browser, page)
        assert browser.find_element("css selector", "#figure svg").is_displayed()
        rows = [tr for tr in browser.find_elements("css selector", "#results tbody tr")
                if tr.is_displayed()]
        assert len(rows) == len(analysis["results"])
        # the controls that need the script are not offered
        assert not browser.find_element("id", "reset").is_displayed()
        assert not browser.find_element("id", "key").is_displayed()
        assert browser.find_element("link text", "Download session YAML").is_displayed()
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


def test_the_browser_draws_the_figure_as_the_svg_export(browser, pages, tmp_path):
    """The figure in the page, as the browser draws it at 1366 × 768, beside the PNG export
    of the same session (Qt draws that from the same SVG): alike, pixel area by area."""
    import numpy as np
    from PySide6.QtGui import QImage

    page, _, session = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")
    shot = tmp_path / "shot.png"
    browser.save_screenshot(str(shot))
    assert QImage(str(shot)).size().toTuple() == VIEWPORT
    (tmp_path / "figure.png").write_bytes(svg.screenshot_as_png)
    box = svg.rect
    assert cli(["render", str(session), "-o", str(tmp_path / "export.png"),
                "--width", str(round(box["width"])), "--height", str(round(box["height"])),
                "--dpi", "96"]) == 0

    def grey(path: Path, cells=(24, 40)):
        image = QImage(str(path)).convertToFormat(QImage.Format.Format_Grayscale8)
        h, w = image.height(), image.width()
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())[:, :w]
        ch, cw = h // cells[0], w // cells[1]
        return pixels[:ch * cells[0], :cw * cells[1]].reshape(cells[0], ch, cells[1], cw) \
            .mean(axis=(1, 3))

    ours, qt = grey(tmp_path / "figure.png"), grey(tmp_path / "export.png")
    # (grey levels of 255: 0.3 on average, at most 14 here; another example is 7 and 60 off)
    assert np.abs(ours - qt).mean() < 1.5
    assert np.abs(ours - qt).max() < 30.0


def test_escape_closes_a_tooltip_pinned_by_a_click(browser, pages):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    spot = _visible(browser, ".rw-pt")[0]
    spot.click()  # (a click pins the tooltip: it stays when the pointer leaves)
    tip = browser.find_element("id", "tip")
    assert tip.is_displayed()
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    assert not tip.is_displayed()
    assert not browser.get_log("browser")


def test_zooming_out_after_a_pan_shows_the_whole_figure(browser, pages):
    """Zoomed in on one corner, dragged, then zoomed out as far as it goes: the whole figure
    is in view again, not a part of it beside an empty margin."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")

    def view() -> list[float]:
        return [float(v) for v in svg.get_dom_attribute("viewBox").split()]

    first = view()
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg, 300, 100), 0, -600) \
        .perform()
    ActionChains(browser).move_to_element(svg).click_and_hold().move_by_offset(200, 0) \
        .move_by_offset(200, 0).release().perform()
    for _ in range(3):
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(svg, -300, -100),
                                                 0, 2000).perform()
    assert view() == pytest.approx(first)
    # a drag never takes the figure out of its frame
    ActionChains(browser).move_to_element(svg).click_and_hold().move_by_offset(150, 80) \
        .move_by_offset(150, 80).release().perform()
    assert view() == pytest.approx(first)
    assert not browser.get_log("browser")


def test_measured_kernels_sort_by_the_names_their_rows_show(browser, tmp_path):
    """A profiled kernel's row shows its tag and short name ("K3 — splitKreduce_kernel"):
    sorted by Operation, the rows go K1, K2, … K10, as read, not by the hidden signatures."""
    page = _render(_profiled_session(tmp_path), tmp_path / "profiled.html")
    _open_page(browser, page)
    heading = next(th for th in browser.find_elements("css selector", "#results th")
                   if th.text == "Operation")

    def tags() -> list[int]:
        return [int(tr.find_element("css selector", "td").text.split(" — ")[0][1:])
                for tr in browser.find_elements("css selector", "#results tbody tr")]

    assert len(tags()) >= 8
    heading.click()
    assert tags() == sorted(tags())
    heading.click()
    assert tags() == sorted(tags(), reverse=True)
    assert not browser.get_log("browser")


LONG_NAME = ("flash_attention_forward_kernel_bf16_causal_headdim128_seqlen8192_batch16"
             "_with_alibi_and_rotary_embeddings")


def test_a_tooltip_stays_in_a_narrow_window(browser, tmp_path):
    """On a phone-wide window (420 px) every point's tooltip in view, a long unbroken name
    in it, is within the window and its text within the tooltip."""
    from workbench.io.sessions import dumps_session, load_session

    session = load_session(ROOT / "workbench" / "examples" / "attention.yaml")
    renamed = session.operations[0].operation.name
    session.operations[0].operation.name = LONG_NAME
    for pair in session.comparisons:
        pair.first = LONG_NAME if pair.first == renamed else pair.first
        pair.second = LONG_NAME if pair.second == renamed else pair.second
    source = tmp_path / "long.yaml"
    source.write_text(dumps_session(session), encoding="utf-8")
    page = _render(source, tmp_path / "long.html")
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 420, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        _open_page(browser, page)
        hovered = set()
        for scroll in (0, 150):
            browser.execute_script("window.scrollTo(arguments[0], 0)", scroll)
            for spot in _visible(browser, ".rw-pt"):
                inside = browser.execute_script(
                    "var r = arguments[0].getBoundingClientRect();"
                    "return r.left >= 0 && r.right <= document.documentElement.clientWidth",
                    spot)
                if not inside:
                    continue
                lines = _hover(browser, spot)
                hovered.add(lines[0])
                left, right, width, overflow = browser.execute_script(
                    "var tip = document.getElementById('tip'), r = tip.getBoundingClientRect();"
                    "return [r.left, r.right, document.documentElement.clientWidth,"
                    "        tip.scrollWidth - tip.clientWidth]")
                assert left >= 0 and right <= width, (lines[:2], scroll, left, right)
                assert overflow <= 0, (lines[:2], overflow)
        assert LONG_NAME in hovered
        assert not browser.get_log("browser")
    finally:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1,
            "mobile": False})


def test_on_a_phone_the_table_scrolls_in_its_own_box_its_caption_whole(browser, pages):
    """On a phone (390 × 844) the page is as wide as the screen: the Results table, wider,
    scrolls sideways in its own box, its caption whole on the screen, and scrolled down
    its heading stays on top, still sorting (the table made the whole page wider, and the
    caption ran off the screen)."""
    page, _, _ = pages["kernels"]
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        _open_page(browser, page)
        table = browser.find_element("id", "results")
        browser.execute_script("arguments[0].scrollIntoView()", table)
        assert browser.execute_script(
            "return document.documentElement.scrollWidth") <= 390
        caption = table.find_element("tag name", "caption")
        assert caption.text.startswith("Results: ") and caption.text.endswith("measured kernel")
        assert browser.execute_script(
            "var r = arguments[0].getBoundingClientRect(); return r.left >= 0 && r.right <= 390",
            caption)
        assert browser.execute_script(
            "var c = arguments[0]; return c.scrollWidth <= c.clientWidth", caption)
        heads = table.find_elements("css selector", "thead th")
        browser.execute_script(
            "var box = arguments[0].parentNode; box.scrollLeft = box.scrollWidth;"
            "box.scrollTop = 1500", table)
        left, right, top, above = browser.execute_script(
            "var r = arguments[0].getBoundingClientRect();"
            "return [r.left, r.right, r.top, arguments[1].parentNode.getBoundingClientRect().top]",
            heads[-1], table)
        assert left >= 0 and right <= 390
        assert top == pytest.approx(above, abs=1)  # (at the top of the box, scrolled down)
        assert browser.execute_script(
            "var r = arguments[0].getBoundingClientRect();"
            "return document.elementFromPoint(r.left + 5, r.top + 5) === arguments[0]",
            heads[-1])
        heads[-1].click()
        assert heads[-1].get_attribute("aria-sort") == "ascending"
        assert not browser.get_log("browser")
    finally:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1,
            "mobile": False})


def _shown_texts(browser) -> list[str]:
    return [t.get_attribute("textContent").strip() for t in _visible(browser, "#figure svg text")]


def test_hiding_a_machine_or_an_operation_takes_its_sweeps_and_texts_away(browser, tmp_path):
    """A sweep's path, its samples and its ridge crossings go with its operation and its
    machine; a machine's roof, ridge and crossing texts go with the machine."""
    page = _render(ROOT / "workbench" / "examples" / "critical_batch_sweep.yaml",
                   tmp_path / "sweep.html")
    _open_page(browser, page)
    data = _page_data(browser)
    [tpu] = [m["name"] for m in data["machines"] if "TPU" in m["name"]]
    [bf16] = [o for o in data["operations"] if o["name"].startswith("bf16 matmul")]
    assert any(t.startswith("TPU v5e: ") for t in _shown_texts(browser))

    def drawn_in(color: str) -> int:  # the shapes of the chart drawn in an operation's colour
        return browser.execute_script(
            "var c = arguments[0], want = 'rgb(' + [1, 3, 5].map(function (i) {"
            "  return parseInt(c.substr(i, 2), 16); }).join(', ') + ')';"
            "return Array.from(document.querySelectorAll('#figure svg path')).filter(function (e) {"
            "  var s = getComputedStyle(e); return s.display !== 'none' && e.getBBox().width > 0"
            "    && (s.fill === want || s.stroke === want); }).length", color)

    assert drawn_in(bf16["color"]) >= 13  # (its points, paths and samples)
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles[tpu].click()
    assert not any(t.startswith("TPU v5e: ") for t in _shown_texts(browser))
    toggles[bf16["name"]].click()
    assert drawn_in(bf16["color"]) == 0
    assert not any("m* = 318.3" in t for t in _shown_texts(browser))  # its crossing on the H100
    toggles[bf16["name"]].click()
    toggles[tpu].click()
    assert drawn_in(bf16["color"]) >= 13
    assert any(t.startswith("TPU v5e: ") for t in _shown_texts(browser))
    assert not browser.get_log("browser")


def test_the_slowest_kernels_alone_take_the_others_tags_away(browser, tmp_path):
    """With the top 3 measured kernels shown, the chart names those 3: the other kernels'
    tags (K1 … K8) and their links go with their marks."""
    page = _render(_profiled_session(tmp_path), tmp_path / "profiled.html")
    _open_page(browser, page)

    def tags() -> list[str]:
        return [t for t in _shown_texts(browser) if t[:1] == "K" and t[1:].isdigit()]

    assert len(tags()) >= 8
    box = browser.find_element("id", "topn")
    box.clear()
    box.send_keys("3")
    assert len(_visible(browser, ".rw-ms")) == 3
    assert len(tags()) == 3
    box.clear()
    box.send_keys("10")
    assert len(tags()) >= 8
    assert not browser.get_log("browser")


def test_hiding_an_operation_takes_its_comparisons_away(browser, pages):
    """A compared pair's arc, arrow and text ("9.72× faster") go when either of its two
    operations is hidden, and come back with it; the other texts stay."""
    page, _, _ = pages["attention"]
    _open_page(browser, page)

    def said() -> set[str]:
        return {t.split(", ")[-1] for t in _shown_texts(browser) if t.endswith(" faster")}

    before = said()
    naive_to_flash = {"9.72× faster", "9.22× faster"}  # (on the H100 and the H200)
    assert naive_to_flash <= before
    flash = next(b for b in browser.find_elements("css selector", "#key button.toggle")
                 if b.text == "Prefill, Flash")
    flash.click()
    assert said() == before - naive_to_flash
    flash.click()
    assert said() == before
    assert not browser.get_log("browser")


def _shown_markers(browser, color: str) -> list[tuple[bool, float]]:
    """The markers the figure shows filled in ``color`` (``#rrggbb``): whether each is round
    and the top of its box on the page."""
    return [tuple(m) for m in browser.execute_script(
        "var c = arguments[0], want = 'rgb(' + [1, 3, 5].map(function (i) {"
        "  return parseInt(c.substr(i, 2), 16); }).join(', ') + ')';"
        "return Array.from(document.querySelectorAll('#figure svg path')).filter(function (e) {"
        "  var s = getComputedStyle(e), b = e.getBoundingClientRect();"
        "  return s.display !== 'none' && !e.closest('[display=none]') && s.fill === want"
        "    && b.width > 4 && b.width < 30; }).map(function (e) {"
        "  return [/C/.test(e.getAttribute('d')), e.getBoundingClientRect().top]; })", color)]


def test_points_of_two_machines_at_one_place_hide_each_with_its_own(browser, pages):
    """Prefill, Flash is compute-bound at the same place on the H100 and the H200 (their
    peaks are equal): a circle under a square. Hiding the operation takes both away; hiding
    the H200 takes its square and leaves the H100's circle, whose tooltip names the H100."""
    page, _, _ = pages["attention"]
    _open_page(browser, page)
    data = _page_data(browser)
    flash = next(o for o in data["operations"] if o["name"] == "Prefill, Flash")
    h200 = next(m for m in data["machines"] if "H200" in m["name"])

    def markers() -> list[bool]:  # whether each marker in Flash's colour is round
        return [round_ for round_, _top in _shown_markers(browser, flash["color"])]

    assert sorted(markers()) == [False, True]  # a square and a circle
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles[flash["name"]].click()
    assert markers() == []
    toggles[flash["name"]].click()
    toggles[h200["name"]].click()
    assert markers() == [True]  # the H100's circle
    [spot] = [el for el in _visible(browser, ".rw-pt")
              if el.get_attribute("data-pts").startswith(f"{flash['id']}:")]
    lines = _hover(browser, spot)
    assert lines[:2] == ["Prefill, Flash", "on NVIDIA H100 SXM5 80GB"]
    assert not browser.get_log("browser")


def test_operations_at_one_place_on_one_machine_hide_each_with_its_own(browser, tmp_path):
    """Two GEMMs of one shape sit at one place on each machine, each in its own colour, one
    marker over the other: hiding one takes its markers away and leaves the other's, and
    hiding both leaves nothing there."""
    gemm = "    kind: gemm\n    m: 8192\n    n: 8192\n    k: 8192\n    dtype: fp16\n"
    source = tmp_path / "twins.yaml"
    source.write_text("schema_version: 2\ntitle: Twins\nhardware:\n  - preset: teaching-machine\n"
                      "  - preset: h100-sxm\noperations:\n  - name: GEMM A\n" + gemm
                      + "  - name: GEMM B\n" + gemm, encoding="utf-8")
    page = _render(source, tmp_path / "twins.html")
    _open_page(browser, page)
    colors = {o["name"]: o["color"] for o in _page_data(browser)["operations"]}
    assert colors["GEMM A"] != colors["GEMM B"]

    def markers(color: str) -> int:  # the chart's markers shown in an operation's colour
        return sum(top < 600 for _round, top in _shown_markers(browser, color))

    assert (markers(colors["GEMM A"]), markers(colors["GEMM B"])) == (2, 2)  # on each machine
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles["GEMM B"].click()
    assert (markers(colors["GEMM A"]), markers(colors["GEMM B"])) == (2, 0)
    toggles["GEMM A"].click()
    assert (markers(colors["GEMM A"]), markers(colors["GEMM B"])) == (0, 0)
    toggles["GEMM B"].click()
    assert (markers(colors["GEMM A"]), markers(colors["GEMM B"])) == (0, 2)
    assert not browser.get_log("browser")


def test_hiding_a_machine_takes_its_ridge_lines_and_verdict_bars_away(browser, pages):
    """Each ridge's dotted line down to the floor stands under a ridge shown, and each
    measured kernel's verdict scale (the wide bars at its prediction) goes with it: hiding
    a machine leaves neither of its own on the page, and hiding both leaves none."""
    page, _, _ = pages["kernels"]
    _open_page(browser, page)

    def drawn() -> tuple[list[float], list[float], int]:
        """The x of each dotted vertical line and of each ridge diamond shown, and how many
        wide bars are shown."""
        return browser.execute_script(
            "var shown = function (e) { return getComputedStyle(e).display !== 'none'"
            "  && !e.closest('[display=none]'); };"
            "var paths = Array.from(document.querySelectorAll('#figure svg path')).filter(shown);"
            "var x = function (e) { var b = e.getBoundingClientRect();"
            "  return Math.round(b.left + b.width / 2); };"
            "var lines = paths.filter(function (e) { var s = getComputedStyle(e),"
            "  b = e.getBoundingClientRect(); return s.strokeDasharray !== 'none'"
            "  && s.strokeWidth === '1px' && b.width < 1 && b.height > 40; }).map(x);"
            "var ridges = Array.from(document.querySelectorAll('#figure svg .rw-ridge'))"
            "  .filter(shown).map(x);"
            "var bars = paths.filter(function (e) {"
            "  return getComputedStyle(e).strokeWidth === '4px'; }).length;"
            "return [lines.sort(), ridges.sort(), bars];")

    lines, ridges, bars = drawn()
    assert len(lines) == len(ridges) == 10 and sorted(set(lines)) == sorted(set(ridges))
    assert bars > 100
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles["NVIDIA H200 SXM 141GB"].click()
    lines, ridges, some = drawn()
    assert len(ridges) == 5 and sorted(set(lines)) == sorted(set(ridges))
    assert 0 < some < bars
    toggles["NVIDIA H100 SXM5 80GB"].click()
    assert drawn() == [[], [], 0]
    toggles["NVIDIA H200 SXM 141GB"].click()
    toggles["NVIDIA H100 SXM5 80GB"].click()
    assert drawn()[2] == bars
    assert not browser.get_log("browser")


def test_markers_keep_their_size_on_screen_when_zoomed(browser, pages):
    """Zoomed in four times over, the points, measured kernels and ridges are as large on
    screen as before (as in the app), each still at its place in the figure: points close
    together come apart instead of growing over each other."""
    page, _, _ = pages["kernels"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")

    def boxes() -> list[tuple[float, float, float, float]]:
        """Each marker's size on screen and its centre in the figure's own units."""
        return browser.execute_script(
            "var svg = arguments[0], m = svg.getScreenCTM().inverse();"
            "return Array.from(svg.querySelectorAll('.rw-pt, .rw-ms, .rw-ridge')).map("
            "  function (e) { var b = e.getBoundingClientRect();"
            "  var c = new DOMPoint(b.left + b.width / 2, b.top + b.height / 2).matrixTransform(m);"
            "  return [b.width, b.height, c.x, c.y]; })", svg)

    before = boxes()
    assert len(before) == 150  # (70 points' markers, 70 measured kernels' and 10 ridges)
    first = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    browser.execute_script(  # (the wheel, over the crowd of small kernels)
        "var s = arguments[0], r = s.getBoundingClientRect();"
        "for (var i = 0; i < 2; i++) s.dispatchEvent(new WheelEvent('wheel', {"
        "  clientX: r.left + 0.43 * r.width, clientY: r.top + 0.35 * r.height, deltaY: -500,"
        "  bubbles: true, cancelable: true}));", svg)
    view = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    assert view[2] < first[2] / 4
    after = boxes()
    for (w0, h0, x0, y0), (w1, h1, x1, y1) in zip(before, after, strict=True):
        assert w1 == pytest.approx(w0, abs=0.5) and h1 == pytest.approx(h0, abs=0.5)
        assert (x1, y1) == pytest.approx((x0, y0), abs=0.2)
    assert not browser.get_log("browser")


@pytest.mark.parametrize("example", ["attention", "kernels"])
def test_texts_keep_their_size_on_screen_beside_their_points_when_zoomed(browser, pages,
                                                                        example):
    """Zoomed in four times over, every text of the figure (names, tags, roofs' values, the
    axes' numbers, the legend) is as large on screen as before, and each point's name stays
    where it was beside its marker (the texts grew four times over, a name far from its
    point and over others); the axes' numbers drawn for the zoomed range are as large as
    those they replace."""
    page, _, _ = pages[example]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")

    def texts(near: dict | None = None) -> dict[int, tuple[str, float, float, float, str | None]]:
        """Each text shown (by a number of its own, the same each time), its height on
        screen and, for a point's name, where it is on screen from the centre of the nearest
        of its markers (``near``: the one nearest before)."""
        return {i: tuple(t) for i, *t in browser.execute_script(
            "var near = arguments[0] || {};"
            "function mid(e) { var b = e.getBoundingClientRect();"
            "  return [b.left + b.width / 2, b.top + b.height / 2]; }"
            "return Array.from(arguments[1].querySelectorAll('text')).map(function (t) {"
            "  if (t.seen === undefined) t.seen = window.seen = (window.seen || 0) + 1;"
            "  var i = t.seen, b = t.getBoundingClientRect(), c = mid(t), op = t.getAttribute('data-op');"
            "  if (!b.height) return null;"
            "  var own = op === null ? [] : Array.from(document.querySelectorAll('.rw-pt'))"
            "    .filter(function (e) { var k = ' ' + e.getAttribute('data-pts');"
            "      return k.indexOf(' ' + op + ':') >= 0; });"
            "  own.sort(function (a, b) { var p = mid(a), q = mid(b);"
            "    return Math.hypot(p[0] - c[0], p[1] - c[1]) - Math.hypot(q[0] - c[0], q[1] - c[1]); });"
            "  var m = near[i] === undefined ? own[0] : own.filter(function (e) {"
            "    return e.getAttribute('data-pts') === near[i]; })[0];"
            "  var p = m ? mid(m) : c, key = m ? m.getAttribute('data-pts') : null;"
            "  return [i, t.textContent, b.height, c[0] - p[0], c[1] - p[1], key];"
            "}).filter(Boolean)", near, svg)}

    before = texts()
    assert len([t for t in before.values() if t[4]]) >= 2 and len(before) > 15
    first = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    browser.execute_script(
        "var s = arguments[0], r = s.getBoundingClientRect();"
        "for (var i = 0; i < 2; i++) s.dispatchEvent(new WheelEvent('wheel', {"
        "  clientX: r.left + 0.4 * r.width, clientY: r.top + 0.35 * r.height, deltaY: -500,"
        "  bubbles: true, cancelable: true}));", svg)
    assert [float(v) for v in svg.get_dom_attribute("viewBox").split()][2] < first[2] / 4
    after = texts({str(i): t[4] for i, t in before.items() if t[4] is not None})
    for i, (text, h0, x0, y0, m0) in before.items():
        if i not in after:  # (an axis's number, drawn anew for the range in view)
            assert text[0].isdigit(), text
            continue
        _, h1, x1, y1, _m1 = after[i]
        assert h1 == pytest.approx(h0, abs=0.5), text
        if m0:  # (a point's name: as far from its marker, on the same side)
            assert (x1, y1) == pytest.approx((x0, y0), abs=1.0), text
    numbers = [before[i] for i in before if i not in after]
    drawn = [after[i] for i in after if i not in before]
    assert len(numbers) >= 4 and len(drawn) >= 2
    for text, h1, *_ in drawn:
        assert h1 == pytest.approx(numbers[0][1], abs=0.5), text
    assert not browser.get_log("browser")


def _axis_number(text: str, unit: str) -> float | None:
    """The value an axis's number says ("200", "2×10⁴", "10⁻²", "500 TFLOP/s"), or None."""
    import re

    if unit:
        said = re.fullmatch(r"([\d.]+) ([kMGTPE]?)" + re.escape(unit), text)
        return None if said is None else float(said[1]) * 1000.0 ** " kMGTPE".index(
            said[2] or " ")
    said = re.fullmatch(r"(?:(\d)×)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if said:
        return float(said[1] or 1) * 10.0 ** int(said[2].translate(
            str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    return float(text) if re.fullmatch(r"\d+(\.\d+)?", text) else None


def test_zoomed_in_the_axes_stay_and_number_the_range_in_view(browser, pages):
    """Zoomed in four times over about a point, the axes stay where they were, numbered for
    the range in view (a decade's 2 and 5 too, in the axes' own style): the numbers either
    side of the point read its intensity and FLOP/s as ``analyze`` gives them, and nothing
    of the plot is drawn beyond its frame; the reset view is numbered as at first (the whole
    figure grew: the axes and their numbers went out of view, the roofs ran over the page's
    margins)."""
    import math

    import numpy as np
    from PySide6.QtGui import QImage

    page, analysis, _ = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")
    data = _page_data(browser)
    strings = data["strings"]
    [key] = [k for k, row in data["points"].items()
             if (strings[row[2]], strings[row[3]]) == ("Prefill, naive", "NVIDIA H100 SXM5 80GB")]
    [marker] = [el for el in _visible(browser, ".rw-pt")
                if key in el.get_attribute("data-pts").split()]
    r = _result(analysis, "Prefill, naive", "NVIDIA H100 SXM5 80GB")
    # the plot's frame on screen: its grid's extent
    left, top, right, bottom = browser.execute_script(
        "var b = Array.from(arguments[0].querySelectorAll('g[stroke-opacity] polyline'))"
        "  .map(function (e) { return e.getBoundingClientRect(); });"
        "return [Math.min.apply(null, b.map(function (r) { return r.left; })),"
        "        Math.min.apply(null, b.map(function (r) { return r.top; })),"
        "        Math.max.apply(null, b.map(function (r) { return r.right; })),"
        "        Math.max.apply(null, b.map(function (r) { return r.bottom; }))]", svg)

    def shown() -> list[tuple[str, float, float, float, float]]:
        return [tuple(t) for t in browser.execute_script(
            "return Array.from(arguments[0].querySelectorAll('text')).map(function (t) {"
            "  var b = t.getBoundingClientRect();"
            "  return [t.textContent, b.left, b.top, b.right, b.bottom]; })"
            ".filter(function (t) { return t[4] > t[2]; })", svg)]

    def numbers() -> tuple[list, list]:
        """The x axis's numbers (value, centre across) below the frame and the y axis's
        (value, centre up) left of it."""
        xs = [(_axis_number(t, ""), (x0 + x1) / 2) for t, x0, y0, x1, y1 in shown()
              if y0 >= bottom and y1 <= bottom + 25 and left - 20 <= x0 and x1 <= right + 20]
        ys = [(_axis_number(t, "FLOP/s"), (y0 + y1) / 2) for t, x0, y0, x1, y1 in shown()
              if x1 <= left and top - 10 <= y0 and y1 <= bottom + 10]
        return [n for n in xs if n[0]], [n for n in ys if n[0]]

    first = shown()
    xs, ys = numbers()
    assert len(xs) >= 3 and len(ys) >= 3  # (1, 10, 100, 1000; 1 TFLOP/s … 1 PFLOP/s)

    def reads(ticks: list, at: float, value: float) -> None:
        """The numbers either side of ``at`` on screen bracket ``value`` and read it."""
        below = max((t for t in ticks if t[0] <= value), key=lambda t: t[0])
        above = min((t for t in ticks if t[0] >= value), key=lambda t: t[0])
        assert below[0] < above[0]
        assert min(below[1], above[1]) < at < max(below[1], above[1])
        share = (at - below[1]) / (above[1] - below[1])
        read = 10 ** (math.log10(below[0]) + share * math.log10(above[0] / below[0]))
        assert read == pytest.approx(value, rel=0.03)

    def brown() -> int:
        """The H200's brown pixels left of the plot's frame and below it."""
        image = QImage.fromData(browser.get_screenshot_as_png()).convertToFormat(
            QImage.Format.Format_RGB888)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
            image.height(), image.bytesPerLine())[:, :image.width() * 3].reshape(
            image.height(), image.width(), 3).astype(int)
        b = svg.rect
        x0, y0 = round(b["x"]), round(b["y"])
        x1, y1 = round(b["x"] + b["width"]), min(round(b["y"] + b["height"]), image.height())
        margins = np.concatenate([pixels[y0:y1, x0:round(left) - 2].reshape(-1, 3),
                                  pixels[round(bottom) + 2:y1, x0:x1].reshape(-1, 3)])
        return int((np.abs(margins - (122, 78, 45)).max(axis=1) < 30).sum())

    assert brown() == 0
    browser.execute_script(
        "var r = arguments[1].getBoundingClientRect();"
        "for (var i = 0; i < 2; i++) arguments[0].dispatchEvent(new WheelEvent('wheel', {"
        "  clientX: (r.left + r.right) / 2, clientY: (r.top + r.bottom) / 2,"
        "  deltaY: -Math.log(2) / 0.0015, bubbles: true, cancelable: true}));", svg, marker)
    box = marker.rect
    xs, ys = numbers()
    assert len(xs) >= 2 and len(ys) >= 2
    reads(xs, box["x"] + box["width"] / 2, r["intensity"])
    reads(ys, box["y"] + box["height"] / 2, r["attainable_flops"])
    assert {v for v, _ in xs} - {10.0 ** d for d in range(-3, 6)}  # (2 or 5 times a decade)
    assert brown() == 0
    browser.find_element("id", "reset").click()
    assert shown() == first
    assert not browser.get_log("browser")


def test_the_verdict_column_sorts_from_faster_than_predicted_to_likely_bugs(browser, tmp_path):
    """Sorted by Verdict, the measured kernels go by how their time met its prediction (re-
    measure, as predicted, overhead-bound, slower than predicted, likely bug), each verdict's
    by measured time / T_predicted; sorted again, the worst come first. (Alphabetically,
    "< 0.8 ×" came between "1.2–2 ×" and "> 2 ×".)"""
    head = ("schema_version: 2\ntitle: Verdicts\nhardware:\n  - name: Toy\n"
            "    compute: {fp16: 100 TFLOP/s}\n    memory: {hbm: 1 TB/s}\n"
            "    launch_overhead: 10 us\noperations:\n"
            "  - {name: big, kind: custom, flops: 100 TFLOP, bytes: 1 TB, precision: fp16}\n"
            "  - {name: tiny, kind: custom, flops: 1 MFLOP, bytes: 1 kB, precision: fp16}\n")
    source = tmp_path / "verdicts.yaml"
    source.write_text(head, encoding="utf-8")
    predicted = {r["operation"]: r["t_predicted_s"] for r in _analyze(source)["results"]}
    runs = [("fast", "big", 0.5), ("bug B", "big", 3.0), ("slow", "big", 1.5),
            ("near B", "big", 1.1), ("launches", "tiny", 1.0), ("bug A", "big", 2.5),
            ("near A", "big", 0.9)]
    source.write_text(head + "measurements:\n" + "".join(
        f"  - {{name: {name}, operation: {op}, hardware: Toy, "
        f"time: {ratio * predicted[op] * 1e6:.9g} us}}\n" for name, op, ratio in runs),
        encoding="utf-8")
    judged = {m["name"]: m for m in _analyze(source)["measurements"]}
    assert {m["verdict"] for m in judged.values()} == {
        "re-measure", "as-predicted", "overhead-bound", "below-prediction", "likely-bug"}
    page = _render(source, tmp_path / "verdicts.html")
    _open_page(browser, page)
    heading = next(th for th in browser.find_elements("css selector", "#results th")
                   if th.text == "Verdict")

    def kernels() -> list[str]:
        return [tr.find_element("css selector", "td").text
                for tr in browser.find_elements("css selector", "#results tbody tr[data-ms]")]

    heading.click()
    order = ["fast", "near A", "near B", "launches", "slow", "bug A", "bug B"]
    assert kernels() == order
    assert [judged[name]["verdict"] for name in order] == [
        "re-measure", "as-predicted", "as-predicted", "overhead-bound", "below-prediction",
        "likely-bug", "likely-bug"]
    heading.click()
    assert kernels() == order[::-1]
    assert not browser.get_log("browser")


def test_a_sweeps_end_text_goes_with_its_own_sweep_in_its_colour(browser, tmp_path):
    """A sweep's end text ("m = 1") is said once per machine for the sweeps that end there:
    hiding the sweep it is drawn for takes it away where the other sweep ends elsewhere
    (it was left, in the hidden sweep's colour, by nothing), and where the other ends at
    the same place it stays, in the colour of the sweep still shown."""
    def end_texts() -> list[tuple[str, str]]:
        return sorted(tuple(t) for t in browser.execute_script(
            "return Array.from(document.querySelectorAll('#figure svg text')).filter("
            "  function (t) { return /^m = \\d+$/.test(t.textContent.trim())"
            "    && getComputedStyle(t).display !== 'none' && !t.closest('[display=none]'); })"
            "  .map(function (t) { return [t.textContent.trim(), getComputedStyle(t).fill]; })"))

    def rgb(color: str) -> str:
        return "rgb({}, {}, {})".format(*(int(color[i:i + 2], 16) for i in (1, 3, 5)))

    page = _render(ROOT / "workbench" / "examples" / "critical_batch_sweep.yaml",
                   tmp_path / "sweep.html")
    _open_page(browser, page)
    operations = _page_data(browser)["operations"]
    [bf16] = [o for o in operations if o["name"].startswith("bf16 matmul")]
    # (at most one "m = 1" and one "m = 4096" for each of the two machines: those that
    # found a place)
    shown = end_texts()
    assert {t for t, _c in shown} == {"m = 1", "m = 4096"} and len(shown) <= 4
    assert {c for _t, c in shown} == {rgb(bf16["color"])}
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles[bf16["name"]].click()  # (the int8 sweep starts and ends elsewhere)
    assert end_texts() == []
    toggles[bf16["name"]].click()
    assert end_texts() == shown

    gemm = ("    kind: gemm\n    m: 128\n    n: 8192\n    k: 8192\n    dtype: bf16\n"
            "    sweep: {param: m, start: 1, stop: 4096, num: 13, scale: log}\n")
    source = tmp_path / "twins.yaml"
    source.write_text("schema_version: 2\ntitle: Twin sweeps\nhardware:\n  - preset: h100-sxm\n"
                      "operations:\n  - name: GEMM A\n" + gemm + "  - name: GEMM B\n" + gemm,
                      encoding="utf-8")
    _open_page(browser, _render(source, tmp_path / "twins.html"))
    colors = {o["name"]: rgb(o["color"]) for o in _page_data(browser)["operations"]}
    assert end_texts() == [("m = 1", colors["GEMM A"]), ("m = 4096", colors["GEMM A"])]
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    toggles["GEMM A"].click()
    assert end_texts() == [("m = 1", colors["GEMM B"]), ("m = 4096", colors["GEMM B"])]
    toggles["GEMM B"].click()
    assert end_texts() == []
    toggles["GEMM A"].click()
    assert end_texts() == [("m = 1", colors["GEMM A"]), ("m = 4096", colors["GEMM A"])]
    assert not browser.get_log("browser")


def test_lines_keep_their_width_on_screen_when_zoomed(browser, pages):
    """Zoomed in on the flat roof four times over, the roof is as thin on screen as before
    (it was drawn four times as thick, and a kernel's verdict bars as wide bands)."""
    import numpy as np
    from PySide6.QtGui import QImage

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")
    roof = next(el for el in _visible(browser, ".rw-roof")
                if el.get_attribute("data-kind") == "compute")

    def thickness() -> int:
        """The roof's dark rows on screen, down the column at the middle of its view."""
        box = browser.execute_script(
            "var r = arguments[0].getBoundingClientRect(), s = arguments[1].getBoundingClientRect();"
            "return [Math.round((Math.max(r.left, s.left) + Math.min(r.right, s.right)) / 2),"
            "        Math.round(r.top)]", roof, svg)
        image = QImage.fromData(browser.get_screenshot_as_png()).convertToFormat(
            QImage.Format.Format_Grayscale8)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
            image.height(), image.bytesPerLine())
        column = pixels[box[1] - 20:box[1] + 21, box[0]]
        return int((column < 128).sum())

    before = thickness()
    assert 1 <= before <= 3
    first = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
    browser.execute_script(
        "var s = arguments[0], r = arguments[1].getBoundingClientRect();"
        "for (var i = 0; i < 2; i++) s.dispatchEvent(new WheelEvent('wheel', {"
        "  clientX: (r.left + r.right) / 2, clientY: r.top, deltaY: -500,"
        "  bubbles: true, cancelable: true}));", svg, roof)
    assert [float(v) for v in svg.get_dom_attribute("viewBox").split()][2] < first[2] / 4
    assert thickness() <= before + 1
    assert not browser.get_log("browser")


def test_the_rows_ring_keeps_its_width_on_screen_when_zoomed(browser, pages):
    """A row of the table under the cursor rings its point on the chart: zoomed in four times
    over, the ring's line is as wide on screen as before, like the chart's lines (it grew
    thinner, a quarter as wide, hard to see)."""
    import numpy as np
    from PySide6.QtGui import QImage

    page, _, _ = pages["attention"]
    _open_page(browser, page)
    svg = browser.find_element("css selector", "#figure svg")
    [row] = [tr for tr in browser.find_elements("css selector", "#results tbody tr")
             if tr.text.startswith("Prefill, Flash NVIDIA H100 SXM5 80GB")]

    def width() -> int:
        """The ring's line across, on screen: its pink columns left of its centre."""
        browser.execute_script(
            "arguments[0].dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))", row)
        left, top, right, bottom = browser.execute_script(
            "var r = document.querySelector('.rw-ring').getBoundingClientRect();"
            "return [r.left, r.top, r.right, r.bottom].map(Math.round)")
        image = QImage.fromData(browser.get_screenshot_as_png()).convertToFormat(
            QImage.Format.Format_RGB888)
        pixels = np.frombuffer(image.constBits(), np.uint8).reshape(
            image.height(), image.bytesPerLine())[:, :image.width() * 3].reshape(
            image.height(), image.width(), 3).astype(int)
        line = pixels[(top + bottom) // 2, left - 3:(left + right) // 2]
        pink = (line[:, 0] > 150) & (line[:, 1] < 110) & (line[:, 2] > 80)
        return int(pink.sum())

    before = width()
    assert 2 <= before <= 4
    browser.execute_script(  # (about the ringed point, twice as close each time)
        "var r = document.querySelector('.rw-ring').getBoundingClientRect();"
        "for (var i = 0; i < 2; i++) arguments[0].dispatchEvent(new WheelEvent('wheel', {"
        "  clientX: (r.left + r.right) / 2, clientY: (r.top + r.bottom) / 2,"
        "  deltaY: -Math.log(2) / 0.0015, bubbles: true, cancelable: true}));", svg)
    assert width() == pytest.approx(before, abs=1)
    assert not browser.get_log("browser")


def test_hiding_operations_takes_their_tags_and_leaders_away(browser, pages):
    """A tag on the chart ("6, 7, 11", "28") names points for the figure's key: it and its
    leader stay while one of the points it names shows, and go with the last of them (they
    were left pointing at empty places)."""
    page, _, _ = pages["kernels"]
    _open_page(browser, page)
    data = _page_data(browser)
    toggles = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}

    def drawn() -> tuple[set[str], int]:
        """The tags shown (texts of numbers, not the axes'), and the leaders (thin lines) of
        the operations' texts (not of a roof's value, which stays with its roof)."""
        texts, leaders = browser.execute_script(
            "var shown = function (e) { return getComputedStyle(e).display !== 'none'"
            "  && !e.closest('[display=none]'); };"
            "return [Array.from(document.querySelectorAll('#figure svg text')).filter(shown)"
            "  .map(function (t) { return t.textContent.trim(); }),"
            "  Array.from(document.querySelectorAll('#figure svg path')).filter(function (e) {"
            "    return shown(e) && !e.hasAttribute('data-of')"
            "      && getComputedStyle(e).strokeWidth === '0.8px'"
            "      && getComputedStyle(e).strokeDasharray === 'none'; }).length]")
        return {t for t in texts if t[:1].isdigit() and t.replace(", ", "").isdigit()
                and t not in ("1", "10", "100", "1000", "10⁴")}, leaders  # (not the axis)

    tags, leaders = drawn()
    assert {"6, 7, 11", "18, 22, 24", "21, 26, 27", "28", "23"} <= tags and leaders >= 10
    # (the key's rows 6, 7, 11, 18, 22 and 24: their tag is said by one text)
    crowd = {row.split(" — ")[1] for row in _shown_texts(browser)
             if row.split(" — ")[0] in ("6", "7", "11", "18", "22", "24")}
    assert len(crowd) == 6 and crowd <= {o["name"] for o in data["operations"]}
    for name in sorted(crowd)[:-1]:
        toggles[name].click()
    assert {"6, 7, 11", "18, 22, 24"} <= drawn()[0]  # (one of them still shows)
    toggles[sorted(crowd)[-1]].click()
    tags_now, leaders_now = drawn()
    assert tags_now == tags - {"6, 7, 11", "18, 22, 24"} and leaders_now < leaders
    for o in data["operations"]:
        if o["name"] not in crowd:
            toggles[o["name"]].click()
    assert drawn() == (set(), 0)
    assert not browser.get_log("browser")


@pytest.mark.parametrize("example", ["llama31_8b_inference", "critical_batch_sweep"])
def test_hiding_every_machine_leaves_no_marker_on_the_chart(browser, tmp_path, example):
    """Llama's prefill and decode RoPE lie at one place in one colour, the decode one a
    hollow (overhead-bound) ring over the prefill one's filled marker; a sweep's sample
    lies on a ridge's diamond. With every machine hidden no marker is left on the chart
    (the filled marker and the diamonds were)."""
    page = _render(ROOT / "workbench" / "examples" / f"{example}.yaml",
                   tmp_path / f"{example}.html")
    _open_page(browser, page)

    def markers() -> int:  # (small shapes on the chart; the legend's are moved there)
        return browser.execute_script(
            "return Array.from(document.querySelectorAll('#figure svg path')).filter(function (e) {"
            "  var b = e.getBoundingClientRect();"
            "  return getComputedStyle(e).display !== 'none' && !e.closest('[display=none]')"
            "    && !e.closest('[transform]') && b.width > 3 && b.width < 30 && b.height > 3"
            "    && b.height < 30; }).length")

    assert markers() > 3
    for button in browser.find_elements("css selector", "#key button.toggle[data-kind=hw]"):
        button.click()
    assert markers() == 0
    assert not browser.get_log("browser")


def test_the_row_under_the_cursor_stays_readable_on_the_dark_theme(browser, tmp_path):
    """The row under the cursor is lit; on the dark theme its light text stays readable
    (it was lit in light pink: light grey on light pink)."""
    from selenium.webdriver.common.action_chains import ActionChains

    page = tmp_path / "dark.html"
    assert cli(["render", str(ROOT / "workbench" / "examples" / "attention.yaml"), "-o",
                str(page), "--theme", "dark"]) == 0
    _open_page(browser, page)
    row = browser.find_elements("css selector", "#results tbody tr")[2]
    ActionChains(browser).move_to_element(row).perform()
    assert "lit" in row.get_attribute("class")
    cell = row.find_elements("css selector", "td")[0]

    def luminance(css: str) -> float:
        r, g, b = (int(v) / 255 for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    text, background = (luminance(cell.value_of_css_property(p))
                        for p in ("color", "background-color"))
    high, low = max(text, background), min(text, background)
    assert (high + 0.05) / (low + 0.05) >= 4.5  # (WCAG's contrast for text)
    assert not browser.get_log("browser")


def test_the_keys_dots_are_the_colours_of_the_chart_on_the_dark_theme(browser, tmp_path):
    """On the dark theme the chart draws a black operation in white (black would vanish on
    the background): the page's key gives each operation the colour of its markers (its
    dot was black on the dark page)."""
    page = tmp_path / "dark.html"
    assert cli(["render", str(ROOT / "workbench" / "examples" / "real_kernels_h100_h200.yaml"),
                "-o", str(page), "--theme", "dark"]) == 0
    _open_page(browser, page)
    dots = {b.text: b.find_element("css selector", "i").value_of_css_property("background-color")
            for b in browser.find_elements("css selector", "#key button.toggle[data-kind=op]")}
    drawn = browser.execute_script(
        "var out = {}; Array.from(document.querySelectorAll('#figure svg .rw-pt')).forEach("
        "  function (e) { var s = getComputedStyle(e), op = e.getAttribute('data-pts').split(':')[0];"
        "  out[op] = (out[op] || []).concat([s.fillOpacity === '0' ? s.stroke : s.fill]); });"
        "return out")
    names = {str(o["id"]): o["name"] for o in _page_data(browser)["operations"]}
    assert len(drawn) == len(dots) > 20
    for op, colors in drawn.items():
        assert dots[names[op]].replace("rgba", "rgb").replace(", 1)", ")") in colors, names[op]
    assert "rgb(0, 0, 0)" not in {c for colors in drawn.values() for c in colors}
    assert not browser.get_log("browser")



@contextlib.contextmanager
def _touch_screen(browser):
    """The page on a phone-wide touch screen of two touch points (the window's own size and
    a mouse again after)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 420, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled",
                            {"enabled": True, "maxTouchPoints": 2})
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1,
            "mobile": False})

def test_a_finger_on_the_figure_scrolls_the_page_unless_zoomed_in(browser, pages):
    """On a phone-wide touch screen the figure fills the width: a swipe up on it scrolls the
    page, as beside it (the figure took every touch, and the page stood still)."""
    import time

    page, _, _ = pages["kernels"]
    with _touch_screen(browser):
        _open_page(browser, page)
        x, y = browser.execute_script(
            "var r = document.querySelector('#figure svg').getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2]")

        def swipe(dy: float) -> None:
            browser.execute_cdp_cmd("Input.dispatchTouchEvent", {
                "type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
            for i in range(1, 11):
                browser.execute_cdp_cmd("Input.dispatchTouchEvent", {
                    "type": "touchMove", "touchPoints": [{"x": x, "y": y + dy * i / 10}]})
                time.sleep(0.02)
            browser.execute_cdp_cmd("Input.dispatchTouchEvent",
                                    {"type": "touchEnd", "touchPoints": []})
            time.sleep(0.3)

        swipe(-150)
        assert browser.execute_script("return window.scrollY") > 50
        # zoomed in, the same swipe drags the figure's view and leaves the page where it is
        browser.execute_script("window.scrollTo(0, 0)")
        svg = browser.find_element("css selector", "#figure svg")
        browser.execute_script(
            "arguments[0].dispatchEvent(new WheelEvent('wheel', {clientX: arguments[1],"
            "  clientY: arguments[2], deltaY: -500, bubbles: true, cancelable: true}))",
            svg, x, y)
        zoomed = [float(v) for v in svg.get_dom_attribute("viewBox").split()]
        swipe(-60)
        assert browser.execute_script("return window.scrollY") == 0
        assert [float(v) for v in svg.get_dom_attribute("viewBox").split()][1] > zoomed[1]
        assert not browser.get_log("browser")


def test_two_fingers_and_a_trackpad_pinch_zoom_about_the_pinch(browser, pages):
    """Two fingers spread apart on a touch screen zoom the figure in about their middle, as
    far as they spread (the page's own zoom took them, or nothing did); a trackpad's pinch
    (the wheel with Ctrl, as Chrome sends it) zooms as far as the fingers spread too (it
    crept: a pinch to twice the size zoomed in by a tenth)."""
    import time

    page, _, _ = pages["attention"]
    with _touch_screen(browser):
        _open_page(browser, page)
        svg = browser.find_element("css selector", "#figure svg")

        def view() -> list[float]:
            return [float(v) for v in svg.get_dom_attribute("viewBox").split()]

        def under(x: float, y: float) -> tuple[float, float]:  # the figure's point there
            return tuple(browser.execute_script(
                "var p = new DOMPoint(arguments[1], arguments[2]).matrixTransform("
                "  arguments[0].getScreenCTM().inverse()); return [p.x, p.y]", svg, x, y))

        first = view()
        x, y = browser.execute_script(
            "var r = arguments[0].getBoundingClientRect();"
            "return [r.left + r.width * 0.4, r.top + r.height * 0.5]", svg)
        middle = under(x, y)
        browser.execute_cdp_cmd("Input.dispatchTouchEvent", {
            "type": "touchStart", "touchPoints": [{"x": x - 20, "y": y, "id": 1},
                                                  {"x": x + 20, "y": y, "id": 2}]})
        for i in range(1, 11):
            browser.execute_cdp_cmd("Input.dispatchTouchEvent", {
                "type": "touchMove", "touchPoints": [{"x": x - 20 - 2 * i, "y": y, "id": 1},
                                                     {"x": x + 20 + 2 * i, "y": y, "id": 2}]})
            time.sleep(0.02)
        browser.execute_cdp_cmd("Input.dispatchTouchEvent",
                                {"type": "touchEnd", "touchPoints": []})
        time.sleep(0.2)
        assert view()[2] == pytest.approx(first[2] / 2, rel=0.05)  # (40 px apart to 80)
        assert under(x, y) == pytest.approx(middle, abs=2)
        assert browser.execute_script("return window.scrollY") == 0
        browser.find_element("id", "reset").click()
        browser.execute_script(
            "for (var i = 0; i < 10; i++) arguments[0].dispatchEvent(new WheelEvent('wheel', {"
            "  clientX: arguments[1], clientY: arguments[2], deltaY: -100 * Math.log(2) / 10,"
            "  ctrlKey: true, bubbles: true, cancelable: true}))", svg, x, y)
        assert view()[2] == pytest.approx(first[2] / 2, rel=0.01)
        assert under(x, y) == pytest.approx(middle, abs=2)
        assert not browser.get_log("browser")


def test_a_machines_row_that_says_its_roofs_still_hides_the_machine(browser, pages):
    """The kernels example at single-column size: the legend says the H200's memory roof
    after its name (no place for it by its line) and the compute roofs both machines share
    on a row of their own; the H200's row, clicked, still hides and shows the machine, as a
    row of the name alone does."""
    page, _, _ = pages["kernels_single"]
    _open_page(browser, page)
    h200 = "NVIDIA H200 SXM 141GB"
    texts = [t.text for t in browser.find_elements("css selector", "#figure svg text")]
    assert any(t.startswith("both machines:") and "bf16 989 TFLOP/s" in t for t in texts), texts
    rows = [t for t in browser.find_elements("css selector", "#figure svg text.rw-legend")
            if t.text.startswith(f"{h200}:")]
    assert len(rows) == 1 and "hbm 4.8 TB/s" in rows[0].text, texts
    h200_id = next(m["id"] for m in _page_data(browser)["machines"] if m["name"] == h200)
    before = _point_keys(browser)
    assert any(k.endswith(f":{h200_id}") for k in before)
    rows[0].click()
    after = _point_keys(browser)
    assert after and not any(k.endswith(f":{h200_id}") for k in after)
    rows[0].click()
    assert sorted(_point_keys(browser)) == sorted(before)
    assert not browser.get_log("browser")


def test_the_text_two_machines_share_stays_while_either_is_shown(browser, pages):
    """The attention example: the H100's and the H200's bf16 roofs are one line, named by
    one text ("bf16 989 TFLOP/s"); hiding the H100 leaves it (in the H200's colour), hiding
    both takes it away."""
    page, _, _ = pages["attention"]
    _open_page(browser, page)

    def shared() -> list:
        return [t for t in _visible(browser, "#figure svg text")
                if t.text == "bf16 989 TFLOP/s"]

    assert len(shared()) == 1
    before = shared()[0].get_attribute("fill")
    buttons = {b.text: b for b in browser.find_elements("css selector", "#key button.toggle")}
    buttons["NVIDIA H100 SXM5 80GB"].click()
    [left] = shared()
    assert left.get_attribute("fill") != before  # (the H200's colour now)
    buttons["NVIDIA H200 SXM 141GB"].click()
    assert shared() == []
    buttons["NVIDIA H100 SXM5 80GB"].click()
    buttons["NVIDIA H200 SXM 141GB"].click()
    assert len(shared()) == 1 and shared()[0].get_attribute("fill") == before
    assert not browser.get_log("browser")
