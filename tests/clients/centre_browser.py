"""The memory centre in a real headless browser (Debian's chromium, driven by Playwright).

Starts `arbor serve --http` on a quickstart store, opens the address it prints (the owner's
token after `#`), and as the store's owner: confirms a suggestion an agent made and finds it
retrievable, forgets a memory and sees the receipt and the memory gone, corrects one, and
saves settings (a refused edit first). Each tab is photographed into --artifacts. A page
opened without the owner's token shows the sign-in form and no memory.

    python centre_browser.py --arbor target/debug/arbor --artifacts artifacts/centre
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

SCOPE = ["--conversation", "quickstart", "--project", "lumen-platform"]


def api(base, path, body=None, token=None, method=None):
    """One JSON request to the server's API; returns (status, value)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/api/v1/memory" + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def start_server(arbor, store):
    server = subprocess.Popen(
        [arbor, "--root", store, "serve", "--http", "--listen", "127.0.0.1:0", *SCOPE],
        stdout=subprocess.PIPE,
        text=True,
    )
    first = server.stdout.readline()
    centre = server.stdout.readline().strip()
    assert first.startswith("listening on "), first
    # Not a terminal: the address is printed without the owner's token, which is in a file
    # only this user can read.
    assert centre.startswith("memory centre at http://") and "#operator=" not in centre, centre
    token_file = Path(store, "centre-token")
    assert token_file.stat().st_mode & 0o077 == 0, "the token file is the owner's alone"
    token = token_file.read_text().strip()
    base = centre.removeprefix("memory centre at ").split(" ", 1)[0].rstrip("/")
    return server, base, f"{base}/#operator={token}", token


def agent_suggestion(base):
    """An agent saves a relationship, a kind that always waits for a person's confirmation."""
    text = "Dana reports to Priya Raman, who leads the platform group."
    status, saved = api(base, "/upsert", {"text": text, "kind": "relationship"})
    assert status == 200, saved
    chunk = saved["chunks"][0]
    assert chunk["status"] == "candidate", saved
    return chunk["leaf_id"], text


def shoot(page, artifacts, name):
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def open_tab(page, name):
    page.click(f"nav#tabs button[data-tab={name}]")
    expect(page.locator(f"#tab-{name}")).to_be_visible()
    page.wait_for_load_state("networkidle")


def run(arbor, artifacts, chromium):
    artifacts.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="arbor-centre-"))
    store = str(scratch / "store")
    subprocess.run(
        [arbor, "quickstart", "--embedder", "hashing", "--dir", store], check=True, stdout=subprocess.DEVNULL
    )
    server, base, url, token = start_server(arbor, store)
    try:
        suggestion, suggested_text = agent_suggestion(base)
        # Words that are markup, as an agent might save them: shown as text, never run.
        payload = 'Mallory typed <img src=x onerror="window.__pwned=1"> into the wiki.'
        status, saved = api(base, "/upsert", {"text": payload, "title": '<b onmouseover="window.__pwned=2">bold</b>'})
        assert status == 200 and saved["chunks"][0]["outcome"] == "created", saved
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            # Without the owner's token, the page opens on the sign-in form and shows no memory:
            # the server's own binding is an agent's.
            stranger = browser.new_page()
            stranger.goto(base + "/")
            expect(stranger.locator("#sign-in")).to_be_visible()
            expect(stranger.locator("#centre")).to_be_hidden()
            shoot(stranger, artifacts, "0-sign-in")
            stranger.fill("#token", "not-the-owners-token-at-all")
            stranger.click("#sign-in-form button")
            expect(stranger.locator("#sign-in-error")).to_contain_text("does not open")
            stranger.close()

            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            expect(page.locator("#memory-list tbody tr").first).to_be_visible()
            assert "#operator=" not in page.url, "the token leaves the address bar"
            expect(page.locator("#scope")).to_contain_text("current memories")
            expect(page.locator("#memory-list")).to_contain_text('<b onmouseover="window.__pwned=2">bold</b>')
            page.locator("#memory-list a", has_text="onmouseover").first.click()
            expect(page.locator("#memory-detail [data-role=body]")).to_contain_text('<img src=x onerror="window.__pwned=1">')
            page.locator("#memory-list a", has_text="onmouseover").first.hover()
            assert page.evaluate("window.__pwned") is None, "memory text is never markup"

            # Pending: confirm the agent's suggestion; it is then retrievable.
            open_tab(page, "pending")
            row = page.locator(f'#pending-list tr[data-id="{suggestion}"]')
            expect(row).to_be_visible()
            shoot(page, artifacts, "2-pending")
            row.locator("button.confirm").click()
            expect(page.locator("#notice")).to_contain_text(f"{suggestion} is active")
            status, pack = api(base, "/retrieve", {"query": "Who does Dana report to?"})
            assert status == 200, pack
            assert suggestion in json.dumps(pack), "the confirmed memory is retrieved"

            # Another suggestion: edited in place (a new suggestion, still waiting), then rejected.
            status, saved = api(base, "/upsert", {"text": "Dana mentors Quentin on the billing team.", "kind": "relationship"})
            assert status == 200 and saved["chunks"][0]["status"] == "candidate", saved
            second = saved["chunks"][0]["leaf_id"]
            open_tab(page, "memories")
            open_tab(page, "pending")
            row = page.locator(f'#pending-list tr[data-id="{second}"]')
            row.locator("button.edit").click()
            expect(row.locator("form.edit-form textarea")).to_have_value("Dana mentors Quentin on the billing team.")
            row.locator("form.edit-form textarea").fill("Dana mentors Quentin on the payments team.")
            row.locator("form.edit-form button").click()
            expect(page.locator("#notice")).to_contain_text("waits for your confirmation")
            edited = page.locator("#pending-list tbody tr", has_text="payments team")
            expect(edited).to_have_count(1)
            edited.locator("button.reject").click()
            expect(page.locator("#notice")).to_contain_text("is rejected")
            expect(page.locator("#pending-list tbody")).not_to_contain_text("payments team")
            status, pack = api(base, "/retrieve", {"query": "Who does Dana mentor?"})
            assert status == 200 and "Quentin" not in json.dumps(pack), "a rejected suggestion is never retrieved"

            # Memories: the confirmed memory, whole, with its earlier version; correct it.
            open_tab(page, "memories")
            page.locator(f'#memory-list tr[data-id="{suggestion}"] a').click()
            expect(page.locator("#memory-detail [data-role=body]")).to_contain_text("Priya Raman")
            # The correction starts from the memory's words, not its file.
            expect(page.locator("#correct-form textarea")).to_have_value(suggested_text)
            corrected_text = "Dana reports to Priya Raman-Okafor, who leads the platform group."
            page.fill("#correct-form textarea", corrected_text)
            page.click("#correct-form button")
            expect(page.locator("#notice")).to_contain_text("Saved as version")
            expect(page.locator("#memory-detail [data-role=body]")).to_contain_text("Raman-Okafor")
            expect(page.locator("#memory-detail")).to_contain_text("Earlier versions")
            shoot(page, artifacts, "1-memories")
            current_id = page.locator("#memory-detail dd").first.inner_text()
            status, node = api(base, "/get?id=" + current_id)
            assert status == 200 and node["body"].strip().endswith(corrected_text), node

            # Forget it: the receipt, and the memory gone from the page and from the API.
            page.click("#forget")
            page.click("#forget")
            receipt = page.locator("#forget-receipt")
            expect(receipt).to_contain_text("Fingerprint kept")
            expect(receipt).to_contain_text(current_id)
            shoot(page, artifacts, "1-memories-forgotten")
            expect(page.locator(f'#memory-list tr[data-id="{current_id}"]')).to_have_count(0)
            status, _ = api(base, "/get?id=" + current_id)
            assert status == 404, "a forgotten memory is not found"
            status, pack = api(base, "/retrieve", {"query": "Who does Dana report to?"})
            assert "Raman" not in json.dumps(pack), "nothing of the forgotten memory is retrieved"

            # Namespaces (health), Usage (audit log and a memory's use), Reports (the day).
            open_tab(page, "namespaces")
            expect(page.locator("#health table.health").first).to_be_visible()
            shoot(page, artifacts, "3-namespaces")
            open_tab(page, "usage")
            expect(page.locator("#audit-list tbody")).to_contain_text("leaf.forgotten")
            shoot(page, artifacts, "4-usage")
            open_tab(page, "reports")
            expect(page.locator("#daily")).to_contain_text("memories in")
            expect(page.locator("#daily")).not_to_contain_text("null")
            shoot(page, artifacts, "5-reports")

            # Profile: what memory believes now and what a rule replaced; undo the replacement.
            status, first = api(base, "/upsert", {"text": "Elif works at the Ankara branch."})
            assert status == 200, first
            ankara = first["chunks"][0]["leaf_id"]
            status, moved = api(base, "/upsert", {"text": "Elif got transferred to the Izmir branch in June."})
            assert status == 200 and moved["chunks"][0]["replaced"][0]["leaf_id"] == ankara, moved
            open_tab(page, "profile")
            expect(page.locator("#profile")).to_contain_text("Izmir branch")
            expect(page.locator("#profile")).to_contain_text("Ankara branch")
            page.fill("#profile-subject", "Elif")
            page.click("#profile-form button")
            expect(page.locator("#profile h3")).to_have_count(1)
            expect(page.locator("#profile h3")).to_have_text("Elif")
            row = page.locator(f'#retired-list tr[data-id="{ankara}"]')
            expect(row).to_contain_text("Ankara branch")
            expect(row).to_contain_text("Izmir branch")
            shoot(page, artifacts, "5-profile")
            row.locator("button.restore-retired").click()
            expect(page.locator("#notice")).to_contain_text("current again")
            expect(page.locator(f'#retired-list tr[data-id="{ankara}"]')).to_have_count(0)
            status, profile = api(base, "/profile?subject=Elif")
            values = sorted(v["value"] for f in profile["subjects"][0]["facts"] for v in f["current"])
            assert status == 200 and values == ["Ankara branch", "Izmir branch"], profile
            status, listed = api(base, "/retired")
            assert status == 403, "the list of retirements is the owner's: an agent's token is refused"

            # Settings: an edit arbor would refuse is refused and changes nothing; a good one saves.
            open_tab(page, "settings")
            expect(page.locator("#settings-text")).to_have_value(re.compile('"format"'))
            original = page.input_value("#settings-text")
            settings = json.loads(original)
            settings["backend"] = "postgres"
            page.fill("#settings-text", json.dumps(settings, indent=2))
            page.click("#settings-form button")
            expect(page.locator("#notice")).to_contain_text("cannot be changed here")
            settings = json.loads(original)
            settings["health"] = {"max_candidate_wait_days": 7}
            page.fill("#settings-text", json.dumps(settings, indent=2))
            page.click("#settings-form button")
            expect(page.locator("#notice")).to_contain_text("Settings saved")
            shoot(page, artifacts, "6-settings")
            saved = json.loads(Path(store, "arbor.json").read_text())
            assert saved["health"]["max_candidate_wait_days"] == 7, saved
            assert saved["backend"] == json.loads(original)["backend"]
            assert not errors, errors
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"memory centre: every check passed; screenshots in {artifacts}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arbor", required=True)
    parser.add_argument("--artifacts", required=True, type=Path)
    parser.add_argument("--chromium", default=os.environ.get("ARBOR_CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()
    run(args.arbor, args.artifacts, args.chromium)


if __name__ == "__main__":
    sys.exit(main())
