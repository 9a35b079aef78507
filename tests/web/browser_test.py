"""The web lab in a real browser: headless Chromium (Debian's) driven by Playwright.

Run by scripts/web-browser-test.sh, which starts `cclab serve` and passes its URL.
It opens the page, checks that a bad value typed into a field gets the CLI's error
beside the field (and, in the TOML tab, above the text), picks the TCPTuner scenario
(seeds/004), sets the tuner flow's beta to 0.7 in the form, starts at 100x, measures
the flow's back-off from the page's own data (ssthresh over the cwnd of the sample
before), moves beta to 0.3 while the run goes on and checks the next back-off is to
about 0.3 of the window, then saves the run. A second run saved is what Compare offers
beside it (a second tab's list follows on focus). Then ten flows for smoothness, memory,
goodput within the link's rate and legends that name the queue and ssthresh; Start
pressed during a run (which stops it) and what a stopped run offers instead of a save; a
reload during a run, which watches it again with its pending save, while a duplicated tab
leaves it to the first; a lost connection, and a run that ends meanwhile; a reload that
finds its run ended, which is watched again, and a reload or a reconnection that finds
another server process's run, which is not; the run limit with the runs to stop; a trace uploaded and deleted; an algorithm
switched with its parameters; and the page under its own CSP with no console error.
Screenshots go to the artefacts folder.
"""

import json
import os
import sys
import time
import urllib.request

from playwright.sync_api import sync_playwright

URL = sys.argv[1]
ARTIFACTS = sys.argv[2]
CHROMIUM_ARGS = [
    "--js-flags=--expose-gc", "--enable-precise-memory-info",
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
TOLERANCE = 0.05
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shot(page, name):
    path = os.path.join(ARTIFACTS, name)
    page.screenshot(path=path, full_page=True)
    print(f"screenshot: {path}")


def wait_for(page, js, timeout=30_000, what=""):
    """Waits until the expression is truthy in the page; fails naming `what`."""
    try:
        page.wait_for_function(js, timeout=timeout)
    except Exception as e:
        raise AssertionError(f"timed out waiting for {what or js}") from e


def post_from_outside(path, body):
    """POSTs to the server as a script would (not through the page, whose requests a
    test may be refusing)."""
    base = URL.split("?")[0].rstrip("/")
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"null")


def wait_checked(page):
    """Waits for the check of the scenario text as it stands (the page checks 300 ms
    after the last edit, and notes the text each completed check was of)."""
    wait_for(page, "() => window.lab.checked === window.lab.toml", what="the check of the scenario as edited")


def backoffs(page, flow):
    return page.evaluate(f"window.lab.run.backoffs({flow})")


def check_bad_value_shows_error(page):
    field = page.locator('[data-field="flows[0].rtt"]')
    field.fill("abc")
    msg = page.locator('[data-msg="flows[0].rtt"]')
    wait_for(page, """() => document.querySelector('[data-msg="flows[0].rtt"]').textContent.length > 0""",
             what="the error beside flows[0].rtt")
    text = msg.text_content()
    print(f"error beside flows[0].rtt: {text}")
    assert 'flows[0].rtt = "abc"' in text, text
    assert "004-tuner-vs-cubic.toml" in text, text
    assert "bad" in (field.get_attribute("class") or "")
    shot(page, "1-bad-value.png")
    field.fill("80ms")
    wait_for(page, """() => document.querySelector('[data-msg="flows[0].rtt"]').textContent === ''""",
             what="the error to clear")


def check_toml_tab_shows_errors(page):
    """In the TOML tab the form (where errors sit beside their fields) is hidden, so a
    refusal shows above the text instead."""
    page.click('.tabs button[data-tab="toml"]')
    good = page.input_value("#toml")
    assert 'rtt = "80ms"' in good, good
    page.fill("#toml", good.replace('rtt = "80ms"', 'rtt = "5ms"', 1))
    wait_for(page, """() => { const b = document.querySelector('#scenario-error');
                              return !b.hidden && b.textContent.includes('flows[0].rtt'); }""",
             what="the TOML tab's error above the text")
    print(f"TOML tab error: {page.text_content('#scenario-error')}")
    shot(page, "1b-toml-tab-error.png")
    page.fill("#toml", good)
    wait_for(page, "() => document.querySelector('#scenario-error').hidden", what="the TOML tab's error to clear")
    # Text that does not parse: the form keeps the scenario as it last parsed and takes
    # no edits, so that none writes it over the text (a user's test, 2026-12-07: an edit
    # of the seed rewrote the text from the form, and a flow being typed was lost).
    broken = good + '[[flows]]\ncc = "vegas"\nparams = { alpha = 3, beta = 6\n'
    page.fill("#toml", broken)
    wait_for(page, "() => document.querySelector('#form').inert && document.querySelector('[data-stale]') && "
                   "document.querySelector('[data-stale]').textContent.includes('does not parse')",
             what="the form to stop taking edits, saying why")
    page.click('.tabs button[data-tab="form"]')
    print(f"form while the text does not parse: {page.text_content('[data-stale]')}")
    assert "does not parse" in page.text_content("[data-stale]")
    page.evaluate("""() => { const i = document.querySelector('[data-field="seed"]');
                             i.value = '7'; i.dispatchEvent(new Event('input', { bubbles: true }));
                             i.dispatchEvent(new Event('change', { bubbles: true })); }""")
    assert page.input_value("#toml") == broken, "the text is as typed"
    page.click('.tabs button[data-tab="toml"]')
    page.fill("#toml", good)
    wait_for(page, "() => !document.querySelector('#form').inert && !document.querySelector('[data-stale]')",
             what="the form to follow the text again")
    # A check the server does not answer is asked again, so the form comes back once the
    # server answers, with no further edit.
    page.route("**/api/scenarios/check", lambda route: route.abort())
    page.fill("#toml", good + "\n# edited while the server is away\n")
    wait_for(page, "() => document.querySelector('#form').inert && document.querySelector('[data-stale]') && "
                   "document.querySelector('[data-stale]').textContent.includes('could not be checked')",
             what="the form to wait for a check the server did not answer")
    print(f"form while the server does not answer: {page.text_content('[data-stale]')}")
    page.unroute("**/api/scenarios/check")
    wait_for(page, "() => !document.querySelector('#form').inert && !document.querySelector('[data-stale]')",
             timeout=10_000, what="the form to follow the text once the server answers")
    page.fill("#toml", good)
    wait_checked(page)
    page.click('.tabs button[data-tab="form"]')


def start_tuner_run(page):
    page.fill('[data-field="duration"]', "600s")
    page.fill('[data-field="flows[1].params.beta"]', "0.7")
    wait_for(page, "() => window.lab.toml.includes('beta = 0.7') && window.lab.toml.includes('600s')",
             what="the form to write beta = 0.7 and duration 600s")
    wait_checked(page)
    assert page.locator("#scenario-error").is_hidden()
    page.click('#speed button[data-speed="100x"]')
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running'", what="the run to start")
    wait_for(page, "() => document.querySelector('#tune-slider-beta') !== null", what="the beta slider")
    assert page.input_value("#tune-flow") == "1", "the tuner flow is selected for tuning"


def check_backoff(page, beta, after):
    """Waits for a back-off of flow 1 after simulated time `after`; checks its ratio."""
    wait_for(page, f"() => window.lab.run.backoffs(1).some(b => b.t > {after})", timeout=60_000,
             what=f"a back-off of the tuner flow after {after} s")
    b = [b for b in backoffs(page, 1) if b["t"] > after][0]
    ratio = b["ssthresh"] / b["cwnd"]
    print(f"beta {beta}: back-off at {b['t']:.3f} s from cwnd {b['cwnd']} to ssthresh {b['ssthresh']}: {ratio:.3f}")
    assert abs(ratio - beta) <= TOLERANCE, f"back-off {ratio:.3f}, expected {beta} +- {TOLERANCE}"
    return b


def check_markers_say_values_and_units(page):
    """Markers label live changes in significant digits with the unit: 1e-9 is not 0."""
    labels = page.evaluate("window.lab.charts.cwnd.markers.map(m => m.label)")
    print(f"change markers: {labels}")
    assert "f1 beta=0.3" in labels, labels


def move_beta(page):
    """Moves the slider to 0.5, then types 0.3 in the number box: each is applied, and
    both controls show the value taken."""
    page.fill("#tune-slider-beta", "0.5")
    wait_for(page, "() => window.lab.run.changes().some(c => c.name === 'beta' && c.value === 0.5 && c.source === 'live')",
             what="the slider's live change of beta to be marked")
    assert page.input_value("#tune-beta") == "0.5", "the number box follows the slider"
    page.fill("#tune-beta", "0.3")
    page.eval_on_selector("#tune-beta", "e => e.blur()")  # a typed number is sent on change
    wait_for(page, "() => window.lab.run.changes().some(c => c.name === 'beta' && c.value === 0.3 && c.source === 'live')",
             what="the typed live change of beta to be marked")
    wait_for(page, "() => document.querySelector('#tune-slider-beta').value === '0.3'",
             what="the slider to follow the typed value")
    change = [c for c in page.evaluate("window.lab.run.changes()") if c["name"] == "beta"][-1]
    print(f"beta -> 0.3 applied at {change['t']:.3f} s simulated")
    # What the W(t) curve is drawn with: the parameters in force, not the scenario's.
    assert page.evaluate("window.lab.run.paramsOf(1).beta") == 0.3
    return change["t"]


OVERLAY_TOML = """name = "overlay"
duration = "3s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "60kB"
[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def check_simulated_and_real_overlay(page):
    """As root with TUN: the same scenario simulated, then on the testbed; the charts of
    the real run carry the simulated run's series, dashed, on the same axes."""
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("overlay of simulated and real runs: skipped (needs root and /dev/net/tun)")
        return
    page.click('.tabs button[data-tab="toml"]')
    page.fill("#toml", OVERLAY_TOML)
    wait_for(page, "() => window.lab.toml.includes('name = \"overlay\"')", what="the TOML tab's scenario")
    wait_checked(page)
    run_at_max_speed(page, "the simulated run to finish", also="!window.lab.run.testbed")
    wait_for(page, "() => { const b = document.querySelector('#testbed-run'); return b && !b.disabled; }",
             what="the kernel panel's testbed button")
    page.click("#testbed-run")
    wait_for(page, "() => window.lab.run && window.lab.run.testbed && window.lab.run.state === 'finished'",
             timeout=60_000, what="the testbed run to finish")
    names = page.evaluate("window.lab.charts.cwnd.series.map(s => s.name)")
    dashed = page.evaluate("window.lab.charts.cwnd.series.filter(s => s.name.endsWith('(simulated)') && s.dash).length")
    points = page.evaluate("window.lab.charts.tput.series.filter(s => s.name.endsWith('(simulated)'))[0].points.length")
    print(f"real run charted with the simulated one: {names}")
    assert dashed == 1 and points > 10, names
    shot(page, "5-real-over-simulated.png")


SMALL_TOML = """name = "small"
duration = "5s"
[bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "60kB"
[[flows]]
cc = "reno"
rtt = "40ms"
"""


def commit(page, selector, value):
    """Types `value` into a form field and commits it (its change event, as leaving the
    field sends)."""
    page.fill(selector, value)
    page.dispatch_event(selector, "change")


def use_toml(page, text, needle):
    """Writes `text` in the TOML tab and waits for its check; back to the form."""
    page.click('.tabs button[data-tab="toml"]')
    page.fill("#toml", text)
    wait_for(page, f"() => window.lab.toml.includes({json.dumps(needle)})", what=f"the TOML with {needle}")
    wait_checked(page)
    page.click('.tabs button[data-tab="form"]')


def run_at_max_speed(page, what, also="true"):
    """Starts the scenario in the form at max speed and waits until that run, not the
    finished one before it, has finished and `also` (a JS expression) holds."""
    before = page.evaluate("window.lab.run ? window.lab.run.id : 0")
    page.click('#speed button[data-speed="max"]')
    page.click("#start")
    wait_for(page, f"() => window.lab.run && window.lab.run.id !== {before}"
                   f" && window.lab.run.state === 'finished' && ({also})", what=what)


def check_compare_offers_two_different_runs(page, context):
    """After a second run is saved (its name sorting before the first's), Compare's
    pickers offer the two, not one run twice; a second tab's list follows on focus; a
    run chosen against itself is refused with a clear note."""
    other = context.new_page()
    other.goto(URL)
    wait_for(other, "() => window.lab && window.lab.ready", what="the second tab")
    # The same flows (compare matches them), beta 0.3 for 10 s.
    tuner = page.evaluate("window.lab.toml").replace('"600s"', '"10s"').replace("beta = 0.7", "beta = 0.3")
    use_toml(page, tuner, "beta = 0.3")
    run_at_max_speed(page, "the small run to finish")
    page.fill("#save-name", "alpha-beta03")
    page.click("#save")
    wait_for(page, """() => document.querySelector('#save-note').textContent.includes('saved as "alpha-beta03"')""",
             what="the second run saved")
    wait_for(page, "() => document.querySelector('#cmp-b').value === 'alpha-beta03'", what="the pickers to follow")
    pair = page.evaluate("[document.querySelector('#cmp-a').value, document.querySelector('#cmp-b').value]")
    print(f"Compare offers {pair[0]} vs {pair[1]}")
    assert pair == ["zeta-beta07", "alpha-beta03"], pair
    page.click("#compare")
    wait_for(page, "() => document.querySelector('#compare-view').open", what="the comparison")
    title = page.text_content("#compare-title")
    assert title == "zeta-beta07 vs alpha-beta03", title
    page.click("#compare-close")
    page.select_option("#cmp-a", "alpha-beta03")
    page.click("#compare")
    note = page.text_content("#compare-note")
    print(f"a run against itself: {note}")
    assert "choose two different saved runs" in note, note
    # Listings answered out of order: the older answer (here faked, empty and held back
    # until the newer is shown) is dropped, and a comparison's note is left alone.
    got = page.evaluate("""async () => {
        const real = window.fetch;
        let release, stale = 0;
        const held = new Promise((r) => { release = r; });
        window.fetch = (path, init) => path === '/api/saved' && !stale++
            ? held.then(() => new Response(JSON.stringify({ saved: [] }))) : real(path, init);
        try {
            const older = window.lab.results.refresh();
            await window.lab.results.refresh('alpha-beta03');
            release();
            await older;
        } finally { window.fetch = real; }
        return [document.querySelectorAll('#saved li').length, document.querySelector('#cmp-b').value,
                document.querySelector('#compare-note').textContent];
    }""")
    print(f"listings out of order: {got[0]} saved runs shown, B = {got[1]}")
    assert got[0] == 2 and got[1] == "alpha-beta03" and got[2] == note, got
    # Choosing another pair clears the note about the pair before.
    page.select_option("#cmp-a", "zeta-beta07")
    assert page.text_content("#compare-note") == "", page.text_content("#compare-note")
    # A listing that fails says so, until one succeeds.
    other.route("**/api/saved", lambda route: route.abort())
    other.evaluate("window.dispatchEvent(new Event('focus'))")
    wait_for(other, "() => document.querySelector('#compare-note').textContent.includes('could not be listed')",
             what="the failed listing to be said")
    other.unroute("**/api/saved")
    other.evaluate("window.dispatchEvent(new Event('focus'))")
    wait_for(other, "() => [...document.querySelectorAll('#saved .name')].some(n => n.textContent === 'alpha-beta03')"
                    " && document.querySelector('#compare-note').textContent === ''",
             what="the second tab's list to follow on focus, and the failure's note to clear")
    other.close()
    page.click('#speed button[data-speed="100x"]')


def check_cross_traffic_is_in_the_flows_line(page):
    """A run with cross traffic both ways: the line under the flows table gives each
    direction's load, the reverse one named, as the server's live table has it."""
    cross = ('[[cross]]\nkind = "cbr"\nrate = "2Mbps"\n'
             '[[cross]]\nkind = "cbr"\nrate = "1Mbps"\ndirection = "reverse"\n')
    use_toml(page, SMALL_TOML + cross, 'direction = "reverse"')
    run_at_max_speed(page, "the cross-traffic run to finish", also="window.lab.run.table")
    wait_for(page, "() => document.querySelector('#fairness').textContent.includes('cross traffic')",
             what="the flows line to give the cross traffic")
    line = page.text_content("#fairness")
    print(f"flows line: {line}")
    table = page.evaluate("window.lab.run.table.cross")
    mbps = lambda bps: f"{bps / 1e6:.3f}"
    forward, reverse = table
    assert f"cross traffic {mbps(forward['throughput_bps'])} of {mbps(forward['offered_bps'])} Mbit/s" in line, line
    assert f"cross traffic (reverse) {mbps(reverse['throughput_bps'])} of" in line, line
    assert 1.9e6 < forward["offered_bps"] < 2.1e6, forward
    page.click('#speed button[data-speed="100x"]')


def check_saved_run_deleted(page):
    """A saved run's delete button asks first (a dialog, accepted by the handler
    check_reload_watches_the_run_again set), then the run leaves the list and its
    folder is gone from the server."""
    names = "() => [...document.querySelectorAll('#saved .name')].map(n => n.textContent)"
    before = page.evaluate(names)
    assert "alpha-beta03" in before, before
    asked = []
    page.once("dialog", lambda d: asked.append(d.message))
    page.locator("#saved li", has_text="alpha-beta03").locator("button.delete").click()
    wait_for(page, f"() => !({names})().includes('alpha-beta03')", what="the deleted run to leave the list")
    assert asked and "alpha-beta03" in asked[0], asked
    after = page.evaluate(names)
    assert after == [n for n in before if n != "alpha-beta03"], (before, after)
    status = page.evaluate("async () => (await fetch('/api/saved/alpha-beta03')).status")
    assert status == 404, status
    # Under the list, how full the results folder is against its limit.
    disk = page.text_content("#disk-note")
    print("disk:", disk)
    assert disk.startswith("results folder: ") and " of 4000.0 MB (" in disk, disk


def heap_mb(page):
    return page.evaluate("() => { window.gc(); return performance.memory.usedJSHeapSize / 1e6; }")


def check_ten_flows_stay_smooth_and_flat(page):
    """Ten flows for 600 simulated seconds at 100x: the page draws a frame for each of
    the server's (20 a second), each frame well under 50 ms, and the page's memory after
    the run is what it was a quarter of the way in (the server decimates)."""
    page.select_option("#picker", "default.toml")
    wait_for(page, """() => document.querySelector('[data-field="flows[0].count"]') !== null""",
             what="the default scenario in the form")
    page.fill('[data-field="flows[0].count"]', "9")
    page.fill('[data-field="duration"]', "600s")
    wait_for(page, "() => window.lab.toml.includes('count = 9') && window.lab.toml.includes('600s')",
             what="10 flows for 600 s")
    wait_checked(page)
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.flows && window.lab.run.flows.length === 10"
                   " && window.lab.run.now > 150", what="a quarter of the ten-flow run")
    start_now = page.evaluate("window.lab.run.now")
    early = heap_mb(page)
    counts = "() => [window.lab.frames, window.lab.run.messages]"
    (f0, m0), t0 = page.evaluate(counts), time.time()
    page.wait_for_timeout(2000)
    (f1, m1), t1 = page.evaluate(counts), time.time()
    fps, mps = (f1 - f0) / (t1 - t0), (m1 - m0) / (t1 - t0)
    draw = sorted(page.evaluate("window.lab.drawMs"))
    p95 = draw[int(len(draw) * 0.95) - 1]
    print(f"10 flows at 100x: {mps:.1f} frames/s from the server, {fps:.1f} drawn/s, "
          f"draw time p50 {draw[len(draw) // 2]:.1f} ms, p95 {p95:.1f} ms (machine load {os.getloadavg()[0]:.1f})")
    # A frame takes well under the 50 ms that 20 frames a second allow. Frames that
    # arrive together are drawn once, so on a saturated machine fewer are drawn than
    # arrive; at least half must be.
    assert f1 - f0 >= 0.5 * (m1 - m0), f"drew {f1 - f0} of {m1 - m0} frames"
    assert p95 < 50, f"p95 draw time {p95:.1f} ms"
    # Goodput over a trailing window stays near the 10 Mbit/s link: bucket to bucket, a
    # hole filled after a loss showed flows at 50 to 60 Mbit/s.
    top = page.evaluate("""Math.max(...window.lab.charts.tput.series.flatMap(
        s => s.points.map(p => p[1]).filter(v => v !== null)))""")
    print(f"highest goodput of a flow in the chart: {top:.2f} Mbit/s (link 10 Mbit/s)")
    assert 0 < top <= 12, top
    # Series that are not a flow's are always named; "+N more" counts only flows.
    cwnd = page.evaluate("[window.lab.charts.cwnd.legendShown, window.lab.charts.cwnd.legendLeftOut]")
    queue = page.evaluate("window.lab.charts.queue.legendShown")
    print(f"cwnd legend {cwnd[0]} +{cwnd[1]} more flows; queue legend {queue}")
    assert "ssthresh (dashed)" in cwnd[0], cwnd
    assert cwnd[1] == 10 - sum(1 for n in cwnd[0] if n.startswith("cubic") or n.startswith("reno")), cwnd
    assert any(n.startswith("queue") for n in queue), queue
    shot(page, "4-ten-flows.png")
    wait_for(page, "() => window.lab.run.state === 'finished'", timeout=60_000, what="the ten-flow run to end")
    # Finished but not saved: a closed page would lose it, so leaving asks first.
    why = page.evaluate("window.lab.leaving()")
    assert why and "not saved" in why, why
    page.wait_for_timeout(300)
    late = heap_mb(page)
    buckets = page.evaluate("window.lab.run.buckets.length")
    print(f"page heap {early:.1f} MB at {start_now:.0f} s, {late:.1f} MB at the end; {buckets} buckets kept")
    assert buckets <= 1001
    assert late < early + 5, f"page memory grew from {early:.1f} to {late:.1f} MB"


def check_start_stops_the_run_going(page):
    """Start while a run goes on stops that run (it would hold a run slot otherwise)."""
    page.click('#speed button[data-speed="realtime"]')
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running'", what="a run at real time")
    first = page.evaluate("window.lab.run.id")
    page.click("#start")
    wait_for(page, f"() => window.lab.run && window.lab.run.id !== {json.dumps(first)} && window.lab.run.state === 'running'",
             what="the second run")
    state = page.evaluate(f"fetch('/api/runs/{first}').then(r => r.json()).then(v => v.state)")
    print(f"run {first} after Start was pressed again: {state}")
    assert state == "stopped", state
    page.click("#stop")
    wait_for(page, "() => window.lab.run.state === 'stopped'", what="the second run to stop")
    # Save is greyed out, and the page says why and what the run leaves to keep.
    wait_for(page, "() => !document.querySelector('#save-why').hidden", what="why a stopped run is not saved")
    why = page.text_content("#save-why")
    print(f"stopped run: {why}")
    assert "Only a whole run can be saved" in why and "run to the end" in why, why
    assert page.get_attribute("#save", "title") == why
    href = page.get_attribute("#run-scenario", "href")
    got = page.evaluate(f"""fetch({json.dumps(href)}).then(async r => [r.status,
        r.headers.get('content-disposition'), await r.text()])""")
    assert got[0] == 200 and "attachment" in got[1] and "[[flows]]" in got[2], got
    page.click('#speed button[data-speed="100x"]')


def check_reload_watches_the_run_again(page):
    """A reload during a run watches it again: the same run, its scenario text, charts
    and tuning (the live changes made before the reload). Leaving asks first. A value
    beyond the slider's end moves the end; markers carry units and tiny values."""
    page.select_option("#picker", "default.toml")
    wait_for(page, """() => document.querySelector('[data-field="flows[0].count"]') !== null""",
             what="the default scenario in the form")
    page.fill('[data-field="duration"]', "900s")
    wait_for(page, "() => window.lab.toml.includes('900s')", what="the 900 s run")
    wait_checked(page)
    page.click('#speed button[data-speed="10x"]')
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running' && window.lab.run.now > 1",
             what="the run to go")
    wait_for(page, "() => document.querySelector('#tune-rto_min') !== null", what="the rto_min box")
    page.fill("#tune-rto_min", "3000")
    page.eval_on_selector("#tune-rto_min", "e => e.blur()")
    wait_for(page, "() => window.lab.run.changes().some(c => c.name === 'rto_min' && c.value === 3000)",
             what="rto_min = 3000 applied")
    slider = page.evaluate("[document.querySelector('#tune-slider-rto_min').value, document.querySelector('#tune-slider-rto_min').max]")
    print(f"rto_min slider after 3000 typed: value {slider[0]}, end {slider[1]}")
    assert slider[0] == "3000", slider
    cc = page.evaluate("window.lab.run.flows[window.lab.tune.selected()].cc")
    page.evaluate(f"""fetch('/api/runs/' + window.lab.run.id + '/params', {{method: 'POST',
        headers: {{'Content-Type': 'application/json'}},
        body: JSON.stringify({{flow: window.lab.tune.selected(), name: 'beta', value: 1e-9}})}})""")
    wait_for(page, "() => window.lab.run.changes().some(c => c.name === 'beta')", what=f"beta = 1e-9 on the {cc} flow")
    page.wait_for_timeout(200)
    labels = page.evaluate("window.lab.charts.cwnd.markers.map(m => m.label)")
    print(f"markers: {labels}")
    assert any(l.endswith("rto_min=3000 ms") for l in labels), labels
    assert any(l.endswith("beta=1e-9") for l in labels), labels
    # Leaving now would leave the run unwatched: the page asks first.
    assert page.evaluate("window.lab.leaving()"), "a run going is a reason to ask"
    asked = page.evaluate("() => { const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented; }")
    assert asked, "beforeunload is refused while a run goes on"
    # A save asked for now is made when the run ends: the page says so after the reload.
    page.fill("#save-name", "kept-pending")
    page.click("#save")
    wait_for(page, """() => document.querySelector('#save-note').textContent.includes('will be saved as "kept-pending"')""",
             what="the save to be pending")
    before = page.evaluate("[window.lab.run.id, window.lab.toml]")
    page.on("dialog", lambda d: d.accept())
    page.reload()
    wait_for(page, "() => window.lab && window.lab.ready", what="the page to load again")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running' && window.lab.run.buckets.length > 5",
             what="the run watched again with its history")
    after = page.evaluate("[window.lab.run.id, window.lab.toml]")
    assert after == before, f"{after[0]} vs {before[0]}"
    note = page.text_content("#tune-note")
    assert "Start a run" not in note, note
    assert page.input_value("#tune-rto_min") == "3000", page.input_value("#tune-rto_min")
    assert page.evaluate("document.querySelector('#speed button.on').dataset.speed") == "10x"
    wait_for(page, """() => document.querySelector('#save-note').textContent.includes('will be saved as "kept-pending"')""",
             what="the pending save to be said after the reload")
    print(f"reload: run {after[0]} watched again, {page.evaluate('window.lab.run.buckets.length')} buckets")
    shot(page, "7-reloaded.png")


def check_duplicated_tab_leaves_the_run(page, context):
    """"Duplicate tab" copies sessionStorage, so the copy remembers the run as well; the
    tab it was copied from still watches it, so the copy starts idle and says why, and
    the first tab watches on. (Playwright cannot duplicate a tab: the copy is a new tab
    given the first tab's sessionStorage before the page's scripts run.)"""
    kept = page.evaluate("sessionStorage.getItem('cclab.run')")
    run_id = page.evaluate("window.lab.run.id")
    dup = context.new_page()
    dup.add_init_script(f"sessionStorage.setItem('cclab.run', {json.dumps(kept)})")
    dup.goto(URL)
    wait_for(dup, "() => window.lab && window.lab.ready", what="the duplicated tab")
    note = dup.text_content("#run-note")
    print(f"duplicated tab: {note}")
    assert dup.evaluate("window.lab.run === null"), "the copy watches nothing"
    assert "watched in another tab" in note, note
    assert dup.evaluate("sessionStorage.getItem('cclab.run')") is None, "the copy forgot the run"
    dup.close()
    assert page.evaluate("[window.lab.run.id, window.lab.run.state, window.lab.run.lost]") == [run_id, "running", None]


def check_lost_connection_is_said(page):
    """The server gone (its requests refused, the WebSocket closed): the page says the
    connection is lost rather than "running" beside a frozen clock, an action says the
    server cannot be reached, and the page watches again once the server answers."""
    page.route("**/api/**", lambda route: route.abort())
    page.evaluate("window.lab.run.ws.close()")
    wait_for(page, "() => document.querySelector('#status').textContent.includes('connection to the lab server lost')",
             what="the lost connection to be said")
    assert page.is_disabled("#stop")
    page.click("#save")
    wait_for(page, "() => document.querySelector('#save-note').textContent.includes('cannot reach the lab server')",
             what="an action to say the server cannot be reached")
    print(f"lost: {page.text_content('#status')}; save: {page.text_content('#save-note')}")
    shot(page, "8-lost.png")
    page.unroute("**/api/**")
    wait_for(page, "() => window.lab.run.state === 'running' && !window.lab.run.lost && "
                   "document.querySelector('#status').textContent === 'running'",
             timeout=15_000, what="the page to watch the run again")
    # The run ends while the server cannot be reached (stopped by a script): once the
    # server answers, the page shows it ended, with nothing left to stop or warn about,
    # and how its pending save went.
    page.route("**/api/**", lambda route: route.abort())
    page.evaluate("window.lab.run.ws.close()")
    wait_for(page, "() => window.lab.run.lost", what="the connection lost again")
    post_from_outside(f"/api/runs/{page.evaluate('window.lab.run.id')}/control", {"action": "stop"})
    page.unroute("**/api/**")
    wait_for(page, "() => window.lab.run.state === 'stopped' && !window.lab.run.lost && "
                   "document.querySelector('#status').textContent.startsWith('stopped')",
             timeout=15_000, what="the run that ended meanwhile to show as stopped")
    assert page.is_disabled("#stop") and page.is_disabled("#pause")
    assert page.evaluate("window.lab.leaving()") is None, page.evaluate("window.lab.leaving()")
    wait_for(page, """() => document.querySelector('#save-note').textContent.includes('not saved as "kept-pending"')""",
             what="the failed save to be said")
    print(f"ended meanwhile: {page.text_content('#status')}; save: {page.text_content('#save-note')}")


def check_only_this_servers_runs_are_watched_again(page):
    """A connection that comes back to another server process (restarted: it numbers its
    runs from 1 again, faked here by another instance in the page's run) says the run is
    gone. A reload does not watch another server's run of the same number (faked in the
    tab's sessionStorage); it starts idle and says why. A run that ended is watched again
    after a reload, so that its charts come back and an unsaved one can still be saved."""
    kept = page.evaluate("sessionStorage.getItem('cclab.run')")
    entry = json.loads(kept)
    instance = page.evaluate(f"fetch('/api/runs/{entry['id']}').then(r => r.json()).then(v => v.instance)")
    assert entry["instance"] == instance and len(instance) >= 16, (entry, instance)
    page.evaluate("() => { window.lab.run.instance = 'an-earlier-server'; window.lab.run.ws.close(); }")
    wait_for(page, "() => document.querySelector('#status').textContent.includes('restarted')",
             what="a run of another server process to be said gone")
    assert page.evaluate("sessionStorage.getItem('cclab.run')") is None
    print(f"another server: {page.text_content('#status')}")
    page.evaluate(f"sessionStorage.setItem('cclab.run', {json.dumps(kept)})")
    page.reload()
    wait_for(page, f"() => window.lab && window.lab.ready && window.lab.run && window.lab.run.id === {entry['id']} "
                   "&& window.lab.run.state === 'stopped' && document.querySelector('#status').textContent.startsWith('stopped')",
             what="the run that ended to be watched again after a reload")
    assert page.is_disabled("#stop"), "nothing to stop"
    assert page.text_content("#run-note") == "", page.text_content("#run-note")
    assert page.evaluate("sessionStorage.getItem('cclab.run')") is not None, "still remembered"
    print(f"reload remembering ended run {entry['id']}: {page.text_content('#status')}")
    faked = json.dumps({**entry, "instance": "an-earlier-server"})
    page.evaluate(f"sessionStorage.setItem('cclab.run', {json.dumps(faked)})")
    page.reload()
    wait_for(page, "() => window.lab && window.lab.ready", what="the page to load again")
    note = page.text_content("#run-note")
    print(f"reload remembering run {entry['id']} of another server: {note}")
    assert page.evaluate("window.lab.run === null"), "nothing watched"
    assert page.text_content("#status") == "idle"
    assert "server was restarted" in note, note
    assert page.evaluate("sessionStorage.getItem('cclab.run')") is None


def check_run_limit_offers_runs_to_stop(page):
    """Four runs going (the server's limit), started elsewhere: Start is refused, and the
    page lists the runs going with a Stop button each; one stopped, Start works."""
    ids = page.evaluate("""async () => { const ids = [];
        for (let i = 0; i < 4; i++) {
            const r = await fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({toml: window.lab.toml, speed: 'realtime'})});
            ids.push((await r.json()).id);
        }
        return ids; }""")
    page.click("#start")
    wait_for(page, "() => document.querySelectorAll('#going [data-stop]').length === 4", what="the runs going, listed")
    err = page.text_content("#scenario-error")
    print(f"at the limit: {err}")
    assert "at most 4 at once" in err, err
    shot(page, "9-run-limit.png")
    page.click(f'#going [data-stop="{ids[0]}"]')
    wait_for(page, "() => document.querySelector('#going').textContent.includes('a slot is free')", what="a slot freed")
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running' && !document.querySelector('#going').textContent",
             what="Start to work again")
    for i in [*ids[1:], page.evaluate("window.lab.run.id")]:
        page.evaluate(f"""fetch('/api/runs/{i}/control', {{method: 'POST', headers: {{'Content-Type': 'application/json'}},
            body: JSON.stringify({{action: 'stop'}})}})""")
    wait_for(page, "() => window.lab.run.state === 'stopped'", what="the runs to stop")


def check_trace_upload(page):
    """A trace uploaded from the form becomes the link, under its file name made a trace
    name (and the page says so); the same again is refused with what to do instead; a
    bad one gets the server's words."""
    ms = "\n".join(str(i) for i in range(1, 101)) + "\n"
    upload = [{"name": "student link.trace", "mimeType": "text/plain", "buffer": ms.encode()}]
    page.set_input_files('[data-upload]', files=upload)
    wait_for(page, "() => window.lab.toml.includes('trace = \"student_link.trace\"')", what="the uploaded trace as the link")
    assert page.input_value('[data-field="bottleneck.link"]') == "student_link.trace"
    note = page.text_content('[data-note="bottleneck.trace"]')
    print("upload:", note)
    assert "as student_link.trace" in note, note
    page.set_input_files('[data-upload]', files=upload)
    wait_for(page, """() => document.querySelector('[data-msg="bottleneck.trace"]').textContent.includes('already uploaded')""",
             what="the same name refused")
    again = page.text_content('[data-msg="bottleneck.trace"]')
    print("same name again:", again)
    assert "rename the file" in again, again
    page.set_input_files('[data-upload]', files=[{"name": "bad.trace", "mimeType": "text/plain", "buffer": b"abc\n"}])
    wait_for(page, """() => document.querySelector('[data-msg="bottleneck.trace"]').textContent.includes('not a mahimahi trace')""",
             what="the refusal of a bad trace beside the link")
    print("bad upload:", page.text_content('[data-msg="bottleneck.trace"]'))
    # The uploaded trace, still the link, is deleted from beside it (after asking): the
    # link becomes a constant rate, the trace leaves the choices and the server.
    assert page.input_value('[data-field="bottleneck.link"]') == "student_link.trace"
    page.locator("#form fieldset", has_text="Bottleneck").screenshot(path=os.path.join(ARTIFACTS, "4b-uploaded-trace.png"))
    asked = []
    page.once("dialog", lambda d: asked.append(d.message))
    page.click('button[data-act="del-trace"]')
    wait_for(page, "() => window.lab.toml.includes('rate = ') && !window.lab.toml.includes('trace = ')",
             what="the link a constant rate after the delete")
    assert asked and "student_link.trace" in asked[0], asked
    options = page.eval_on_selector_all('[data-field="bottleneck.link"] option', "os => os.map(o => o.value)")
    assert "student_link.trace" not in options and "5.65mbps.trace" in options, options
    assert page.locator('button[data-act="del-trace"]').count() == 0
    note = page.text_content('[data-note="bottleneck.trace"]')
    print("delete:", note)
    assert "deleted student_link.trace" in note, note
    names = page.evaluate("async () => (await (await fetch('/api/traces')).json()).traces.map(t => t.name)")
    assert "student_link.trace" not in names, names
    # A ready trace offers no delete.
    page.select_option('[data-field="bottleneck.link"]', "5.65mbps.trace")
    wait_for(page, "() => window.lab.toml.includes('trace = \"5.65mbps.trace\"')", what="the ready trace as the link")
    assert page.locator('button[data-act="del-trace"]').count() == 0


def check_algorithm_switch_and_loss_zero(page):
    """cubic -> reno drops beta (said in the form) instead of leaving an error with no
    control; a parameter the algorithm lacks, typed in the TOML, can be removed; loss = 0
    shows as no loss, and random loss starts at p = 0.01."""
    use_toml(page, SMALL_TOML.replace('cc = "reno"', 'cc = "cubic"\nparams = { beta = 0.5 }')
             .replace('buffer = "60kB"', 'buffer = "60kB"\nloss = 0.0'), "beta = 0.5")
    shown = page.eval_on_selector('[data-field="bottleneck.loss"]', "e => e.selectedOptions[0].textContent")
    assert shown == "none (loss = 0)", f"loss = 0 shows as {shown!r}: the form did not load the new text"
    page.select_option('[data-field="flows[0].cc"]', "reno")
    wait_for(page, "() => window.lab.toml.includes('cc = \"reno\"') && !window.lab.toml.includes('beta')",
             what="beta dropped with cubic")
    note = page.text_content('[data-note="flows[0].params"]')
    print(f"cubic -> reno: {note}")
    assert "beta dropped: reno has no such parameter" in note, note
    wait_checked(page)
    assert page.text_content('[data-msg="flows[0].params"]') == "", "no error left behind"
    use_toml(page, SMALL_TOML.replace('cc = "reno"', 'cc = "reno"\nparams = { beta = 0.5 }'), "beta = 0.5")
    wait_for(page, """() => document.querySelector('[data-msg="flows[0].params.beta"]').textContent.includes('has no parameter')""",
             what="the error beside the stray parameter")
    page.click('[data-act="del-param"][data-param="beta"]')
    wait_for(page, "() => !window.lab.toml.includes('beta')", what="the stray parameter removed")
    page.select_option('[data-field="bottleneck.loss"]', "bernoulli")
    wait_for(page, "() => window.lab.toml.includes('loss = 0.01')", what="random loss at p = 0.01")
    check_switch_and_removal_keep_changes_valid(page)


def check_switch_and_removal_keep_changes_valid(page):
    """Scheduled changes follow their flow: switching its algorithm drops the changes'
    parameters the new one lacks (a TCP-level setting stays), and removing a flow removes
    its changes and renumbers later flows' ones, instead of leaving a change that the
    server refuses or, worse, one that now names another flow."""
    flow1 = '[[flows]]\ncc = "reno"\nrtt = "60ms"\n'
    changes = ('[[changes]]\nat = "1s"\nflow = 0\nset = { beta = 0.5, rto_min = "100ms" }\n'
               '[[changes]]\nat = "2s"\nflow = 0\nset = { beta = 0.6 }\n'
               '[[changes]]\nat = "3s"\nflow = 1\nset = { initcwnd = 4 }\n')
    text = SMALL_TOML.replace('cc = "reno"', 'cc = "cubic"') + flow1 + changes + '[metrics]\nreference = 1\n'
    use_toml(page, text, "initcwnd = 4")
    page.select_option('[data-field="flows[0].cc"]', "reno")
    wait_for(page, "() => window.lab.toml.includes('cc = \"reno\"\\nrtt = \"40ms\"')", what="flow 0 switched to reno")
    toml = page.evaluate("window.lab.toml")
    assert "beta" not in toml and 'set = { rto_min = "100ms" }' in toml and toml.count("[[changes]]") == 2, toml
    note = page.text_content('[data-note="flows[0].params"]')
    print(f"cubic -> reno with changes: {note}")
    assert "scheduled changes dropped: beta at 1s, beta at 2s" in note, note
    wait_checked(page)
    assert all(t == "" for t in page.eval_on_selector_all("#form [data-msg]", "ms => ms.map(m => m.textContent)")), \
        "the scenario is valid after the switch"
    page.click('[data-act="del-flow"][data-index="0"]')
    wait_for(page, "() => window.lab.toml.split('[[changes]]').length === 2", what="flow 0's change removed")
    toml = page.evaluate("window.lab.toml")
    assert 'flow = 0\nset = { initcwnd = 4 }' in toml and 'rtt = "40ms"' not in toml, toml
    assert "metrics = { reference = 0 }" in toml, toml
    note = page.text_content('[data-note="flows"]')
    print(f"flow 0 removed: {note}")
    assert note.startswith("1 scheduled change of flows[0] removed"), note
    assert "the metrics' reference renumbered to flow 0" in note and "the change of later flows renumbered" in note, note
    wait_checked(page)


def check_count_and_meaning_follow_the_flows(page):
    """A flow's count numbers the flows after it: changing it renumbers later flows'
    scheduled changes and drops those of flows it no longer has. Switching cubic to
    cubic-2008 keeps beta and says to check it: there it is the fraction given up, not
    the one kept. RED's gentle is a switch (the form sent the text "true", which was
    refused). (A user's test, 2026-12-07.)"""
    text = (SMALL_TOML.replace('cc = "reno"', 'cc = "cubic"\ncount = 3\nparams = { beta = 0.8 }')
            + '[[flows]]\ncc = "reno"\nrtt = "60ms"\n'
            + '[[changes]]\nat = "1s"\nflow = 2\nset = { beta = 0.5 }\n'
            + '[[changes]]\nat = "2s"\nflow = 3\nset = { initcwnd = 4 }\n')
    use_toml(page, text, "initcwnd = 4")
    commit(page, '[data-field="flows[0].count"]', "2")
    wait_for(page, "() => window.lab.toml.includes('flow = 2\\nset = { initcwnd = 4 }') && !window.lab.toml.includes('beta = 0.5')",
             what="the changes to follow the new count")
    note = page.text_content('[data-note="flows"]')
    print(f"count 3 -> 2: {note}")
    assert "1 scheduled change of flows[0] removed" in note and "the change of later flows renumbered" in note, note
    wait_checked(page)
    # Each entry is marked with its flows' colour and numbers in the charts.
    heads = [page.text_content(f'[data-label="flows[{i}]"]') for i in (0, 1)]
    print(f"flow entries: {heads}")
    assert heads[0].endswith("(charts: 0 to 1)") and heads[1].endswith("(charts: 2)"), heads
    # A count the server refuses (0) renumbers nothing; the next valid one counts from 2.
    # Nor does one too large for a number, which stays as typed (it became "Infinity").
    for count, written in [("0", "0"), ("1e400", '"1e400"'), ("2", "2")]:
        commit(page, '[data-field="flows[0].count"]', count)
        wait_for(page, f"() => window.lab.toml.includes('count = {written}')", what=f"count = {written} written")
        assert "flow = 2\nset = { initcwnd = 4 }" in page.evaluate("window.lab.toml"), page.evaluate("window.lab.toml")
    wait_checked(page)
    page.select_option('[data-field="flows[0].cc"]', "cubic-2008")
    wait_for(page, "() => window.lab.toml.includes('cc = \"cubic-2008\"')", what="the switch to cubic-2008")
    note = page.text_content('[data-note="flows[0].params"]')
    print(f"cubic -> cubic-2008: {note}")
    assert 'beta kept: check its value, as cubic-2008 describes it otherwise ("window decrease at a loss' in note, note
    page.select_option('[data-field="bottleneck.qdisc"]', "red")
    page.fill('[data-field="bottleneck.qdisc.gentle"]', "false")
    wait_for(page, "() => window.lab.toml.includes('gentle = false')", what="gentle written as a switch")
    wait_checked(page)
    assert page.text_content('[data-msg="bottleneck.qdisc.gentle"]') == "", page.text_content('[data-msg="bottleneck.qdisc.gentle"]')


def check_tune_panel_follows_scheduled_changes(page):
    """The tuning controls show the value a flow has now, scheduled `[[changes]]`
    included, so a nudge starts from it (it started from the scenario's value: a user's
    test, 2026-12-07); a value the flow has already is not sent as a change."""
    with open(os.path.join(REPO, "scenarios/small/cubic-codel-changes.toml")) as f:
        text = f.read().replace('duration = "5s"', 'duration = "120s"')
    use_toml(page, text, 'duration = "120s"')
    page.click('#speed button[data-speed="10x"]')
    page.click("#start")
    wait_for(page, "() => window.lab.run && window.lab.run.state === 'running' && window.lab.run.now > 3",
             what="the run past its scheduled change at 2.5 s")
    wait_for(page, "() => document.querySelector('#tune-beta') && document.querySelector('#tune-beta').value === '0.5'",
             what="the beta box to show the scheduled 0.5")
    commit(page, "#tune-beta", "0.5")
    page.wait_for_timeout(300)
    changes = page.evaluate("window.lab.run.changes().map(c => [c.source, c.name, c.value])")
    print(f"changes after 0.5 entered again: {changes}")
    assert changes == [["scenario", "beta", 0.5]], changes
    page.click("#stop")
    wait_for(page, "() => window.lab.run.state === 'stopped'", what="the run to stop")


def check_refused_start_shows_why(page):
    """A Start the server refuses for a field far down the form (a scheduled change of a
    parameter reno lacks) brings that field's message into view: before, the page stayed
    idle with the reason off-screen (a user's test, 2026-12-07)."""
    changes = '[[changes]]\nat = "1s"\nflow = 0\nset = { beta = 0.5 }\n'
    use_toml(page, SMALL_TOML + changes, "set = { beta = 0.5 }")
    msg = '[data-msg="changes[0]"]'
    wait_for(page, f"() => document.querySelector('{msg}').textContent.includes('beta')",
             what="the error beside the scheduled change")
    in_view = f"""() => {{ const r = document.querySelector('{msg}').getBoundingClientRect();
                          return r.top >= 0 && r.bottom <= window.innerHeight; }}"""
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": 420})
    to_top = "() => { for (const e of document.querySelectorAll('*')) e.scrollTop = 0; }"
    try:
        page.evaluate(to_top)
        assert not page.evaluate(in_view), "the message is on screen before Start: the check would prove nothing"
        page.click("#start")
        wait_for(page, in_view, what="the refused Start's reason scrolled into view")
        print(f"refused Start shows: {page.text_content(msg)}")
        # The same with a run going, which Start checks the scenario for before it stops it.
        use_toml(page, SMALL_TOML, 'name = "small"')
        page.click('#speed button[data-speed="realtime"]')
        page.click("#start")
        wait_for(page, "() => window.lab.run && window.lab.run.state === 'running'", what="a run at real time")
        use_toml(page, SMALL_TOML + changes, "set = { beta = 0.5 }")
        page.evaluate(to_top)
        assert not page.evaluate(in_view)
        page.click("#start")
        wait_for(page, in_view, what="the reason in view, with a run going")
        assert page.evaluate("window.lab.run.state") == "running", "a refused Start leaves the run going"
        page.click("#stop")
        wait_for(page, "() => window.lab.run.state === 'stopped'", what="the run to stop")
    finally:
        page.set_viewport_size(size)
        page.click('#speed button[data-speed="100x"]')


def check_page_obeys_its_own_csp(browser):
    """The page under its own Content-Security-Policy (the main context bypasses it for
    Playwright's waits): no console error, so nothing the page does is refused. In a
    900-pixel window (half a laptop's screen) nothing is wider than the window."""
    context = browser.new_context(viewport={"width": 900, "height": 900})
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(URL)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    print(f"page under its CSP: {len(problems)} console errors")
    assert not problems, problems
    wide, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    shot(page, "6-narrow-900.png")
    assert wide <= window, f"the page is {wide} px wide in a {window} px window"
    # On a phone the flows table scrolls in its card; the page itself does not pan.
    page.set_viewport_size({"width": 360, "height": 740})
    page.wait_for_timeout(300)
    wide, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    shot(page, "6b-phone-360.png")
    assert wide <= window, f"the page is {wide} px wide in a {window} px window"
    context.close()


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        # The page's CSP forbids eval; Playwright's waits evaluate strings, so the test
        # context (only) bypasses it.
        context = browser.new_context(viewport={"width": 1600, "height": 1000}, bypass_csp=True)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(URL)
        wait_for(page, "() => window.lab && window.lab.ready", what="the page to load")
        page.select_option("#picker", "seeds/004-tuner-vs-cubic.toml")
        wait_for(page, """() => document.querySelector('[data-field="flows[1].params.beta"]') !== null""",
                 what="the TCPTuner scenario in the form")
        check_bad_value_shows_error(page)
        check_toml_tab_shows_errors(page)
        start_tuner_run(page)
        first = check_backoff(page, 0.7, 0.0)
        changed_at = move_beta(page)
        assert changed_at >= first["t"]
        check_backoff(page, 0.3, changed_at)
        shot(page, "2-running-after-beta-0.3.png")
        page.locator("#chart-cwnd").screenshot(path=os.path.join(ARTIFACTS, "2b-cwnd-chart.png"))
        check_markers_say_values_and_units(page)
        page.fill("#save-name", "zeta-beta07")
        page.click("#save")
        wait_for(page, "() => document.querySelector('#save-note').textContent.startsWith('saved as')",
                 timeout=60_000, what="the run to finish and be saved")
        print(page.text_content("#save-note"))
        wait_for(page, "() => document.querySelectorAll('#saved li').length > 0", what="the saved list")
        assert page.evaluate("window.lab.leaving()") is None, page.evaluate("window.lab.leaving()")
        shot(page, "3-finished-and-saved.png")
        check_compare_offers_two_different_runs(page, context)
        check_cross_traffic_is_in_the_flows_line(page)
        check_ten_flows_stay_smooth_and_flat(page)
        check_start_stops_the_run_going(page)
        check_reload_watches_the_run_again(page)
        check_duplicated_tab_leaves_the_run(page, context)
        check_lost_connection_is_said(page)
        check_only_this_servers_runs_are_watched_again(page)
        check_run_limit_offers_runs_to_stop(page)
        check_trace_upload(page)
        check_algorithm_switch_and_loss_zero(page)
        check_count_and_meaning_follow_the_flows(page)
        check_tune_panel_follows_scheduled_changes(page)
        check_refused_start_shows_why(page)
        check_simulated_and_real_overlay(page)
        check_saved_run_deleted(page)
        check_page_obeys_its_own_csp(browser)
        assert not errors, f"errors in the page: {errors}"
        browser.close()
    print("browser test passed")


if __name__ == "__main__":
    main()
