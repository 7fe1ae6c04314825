"""The browser client at ``/`` driven by a real headless Chromium (Selenium), against a real
API server whose model is the deterministic fake (``api_server`` in conftest.py).

Needs Debian's ``/usr/bin/chromium`` and ``/usr/bin/chromedriver``; the test fails (it does not
skip) when they are missing. The driver path is passed explicitly, so selenium-manager never
downloads anything. A screenshot goes to ``$FLORA_ARTIFACTS`` (or ``tests/artifacts/``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 20
REPO = Path(__file__).resolve().parents[2]
# a user of its own (the key names the tenant only), so other tests' paused tasks never
# take this test's words as their answer
USER = "browser_" + uuid.uuid4().hex[:8]


def artifacts_dir() -> Path:
    path = Path(os.environ.get("FLORA_ARTIFACTS") or REPO / "tests" / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not (os.path.isfile(p) and os.access(p, os.X_OK))]
    if missing:
        pytest.fail(f"the browser test needs {' and '.join(missing)} (Debian packages chromium and "
                    f"chromium-driver: apt-get install chromium chromium-driver); found on PATH: "
                    f"chromium={shutil.which('chromium')}, chromedriver={shutil.which('chromedriver')}")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        pytest.fail(f"the browser test needs selenium (pip install -r requirements-dev.txt): {exc}")

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--disable-gpu", "--lang=en-US"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser, api_server, request):
    """The client open and signed in; on failure, a screenshot and the browser's console."""
    failed_before = request.session.testsfailed
    open_client(browser, api_server)
    yield browser
    if request.session.testsfailed > failed_before:
        browser.save_screenshot(str(artifacts_dir() / f"browser_failure_{request.node.name}.png"))
        for entry in browser.get_log("browser"):
            print("browser console:", entry)


def wait(driver, condition, message: str, timeout: float = WAIT_S):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # the client re-renders lists and messages freely: an element seen a moment ago may be gone
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, timeout, poll_frequency=0.1, ignored_exceptions=ignored).until(condition, message)


def css(driver, selector):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def visible(driver, selector):
    found = [e for e in css(driver, selector) if e.is_displayed()]
    return found[0] if found else None


def click(driver, selector: str, *, last: bool = False) -> None:
    """Click the first (or last) shown, enabled element matching ``selector``, retrying
    while the client re-renders it."""
    def attempt(d):
        found = [e for e in css(d, selector) if e.is_displayed() and e.is_enabled()]
        if not found:
            return False
        found[-1 if last else 0].click()
        return True

    wait(driver, attempt, f"nothing to click at {selector}")


def open_client(driver, server) -> None:
    """Open ``/``; enter the API key (and this module's user) when the client asks for them;
    wait until it is ready."""
    driver.get(server.url + "/")

    def prompted_or_ready(d):
        if d.execute_script("return document.body.dataset.ready === '1'"):
            return "ready"
        return "key" if visible(d, "#key-input") else False

    if wait(driver, prompted_or_ready, "the client neither asked for a key nor became ready") == "key":
        key_input = visible(driver, "#key-input")
        key_input.send_keys(server.key)
        css(driver, "#user-input")[0].send_keys(USER)
        click(driver, "#key-submit")
        wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === '1'"),
             "the client did not become ready after the key was entered")
    wait(driver, lambda d: css(d, "#identity")[0].text.replace(" ", "") == f"team-a/{USER}",
         "the header does not show the tenant and user")


def send(driver, text: str) -> None:
    box = css(driver, "#message-input")[0]
    box.clear()
    box.send_keys(text)
    click(driver, "#send-button")


def assistant_reply(driver, message_type: str, containing: str = ""):
    def found(d):
        for el in css(d, f".msg.assistant[data-type='{message_type}']"):
            if containing in el.text:
                return el
        return False

    return found


def write_on_board(server, task_id: str, fact: str) -> None:
    from capabilities.memory.whiteboard import Whiteboard
    from common.tasks.sqlite_store import SQLiteTaskStore

    store = SQLiteTaskStore(server.data_dir / "flora.db")
    try:
        task = store.get_task("team-a", task_id)
        Whiteboard(store).write("team-a", task_id, facts=[fact], user_id=task.user_id)  # the user's event stream
    finally:
        store.close()


def test_answer_a_paused_task_through_its_form(page, api_server):
    driver = page
    click(driver, "#new-chat-button")
    send(driver, "add numbers a=2")

    form = wait(driver, lambda d: visible(d, "form.param-form input[name='b']") and css(d, "form.param-form")[-1],
                "no form asking for the missing parameter b")
    task_id = form.get_attribute("data-task-id")
    assert task_id, "the parameter form does not name its task"
    b = css(driver, "form.param-form input[name='b']")[-1]
    assert b.get_attribute("type") == "number", "an integer parameter should get a number input"
    assert css(driver, "form.param-form input[name='a']") == [], "a was given; only b should be asked for"

    # the task's timeline, opened from the task list while the task waits for b
    wait(driver, lambda d: css(d, f"#tasks-list .task[data-task-id='{task_id}'][data-state='waiting_parameters']"),
         f"the task list does not show {task_id} waiting for parameters")
    click(driver, f"#tasks-list .task[data-task-id='{task_id}'] .item-main")
    wait(driver, lambda d: visible(d, "#timeline-list .event[data-event-type='TASK_PAUSED']"),
         "the timeline does not show TASK_PAUSED")
    assert not visible(driver, "#whiteboard"), "an empty whiteboard should not be shown"
    write_on_board(api_server, task_id, "a is 2")  # as a step of the task would
    wait(driver, lambda d: visible(d, "#whiteboard .whiteboard-facts li") and
         css(d, "#whiteboard .whiteboard-facts li")[0].text == "a is 2",
         "the open timeline did not show the task's whiteboard once it was written")

    b.send_keys("3")
    click(driver, "form.param-form button.param-submit", last=True)

    done = wait(driver, assistant_reply(driver, "task_completed", "5"), "no completed reply containing 5")
    assert done.get_attribute("data-task-id") == task_id
    wait(driver, lambda d: css(d, f"#tasks-list .task[data-task-id='{task_id}'][data-state='completed']"),
         f"the task list does not show {task_id} as completed")
    wait(driver, lambda d: not (b.is_enabled() or css(d, "form.param-form button.param-submit")[-1].is_enabled()),
         "the answered form is still enabled")
    # the streamed answer showed the task's lifecycle under the pending message
    progress = [e.get_attribute("data-event-type") for e in css(driver, ".progress-line")]
    assert "TASK_COMPLETED" in progress or "TASK_RESUMED" in progress, progress

    # the open timeline got the rest of the task's life from the live event stream
    wait(driver, lambda d: visible(d, "#timeline-list .event[data-event-type='TASK_COMPLETED']"),
         "the open timeline was not updated live with TASK_COMPLETED")
    click(driver, "#tab-tasks")

    driver.save_screenshot(str(artifacts_dir() / "browser_chat.png"))


def test_sessions_survive_a_reload(page, api_server):
    driver = page
    click(driver, "#new-chat-button")
    send(driver, "hello")
    wait(driver, assistant_reply(driver, "chat_reply"), "no chat reply to hello")
    active = wait(driver, lambda d: css(d, "#session-list .session.active"), "the new chat is not listed")[0]
    session_id = active.get_attribute("data-session-id")
    assert session_id

    driver.refresh()
    open_client(driver, api_server)
    wait(driver, lambda d: css(d, f"#session-list .session[data-session-id='{session_id}']"),
         "the session is not listed after a reload")
    click(driver, f"#session-list .session[data-session-id='{session_id}'] .session-open")

    wait(driver, lambda d: any(e.text.strip() == "hello" for e in css(d, "#messages .msg.user .bubble")),
         "the user's message is not shown again after a reload")
    wait(driver, assistant_reply(driver, "chat_reply"), "the reply is not shown again after a reload")
    assert "hello" in css(driver, "#chat-title")[0].text

    # the earlier conversation is still there too, its answered form disabled
    earlier = [e.get_attribute("data-session-id") for e in css(driver, "#session-list .session")
               if "add numbers" in e.text]
    if earlier:
        click(driver, f"#session-list .session[data-session-id='{earlier[0]}'] .session-open")
        wait(driver, assistant_reply(driver, "task_completed", "5"), "the earlier conversation lost its answer")
        inputs = css(driver, "form.param-form input[name='b']")
        assert inputs and not inputs[0].is_enabled(), "a form answered before the reload is enabled again"


def test_the_memory_tab_shows_what_flora_remembers_live_and_forgets_it(page, api_server):
    driver = page
    click(driver, "#tab-memory")
    wait(driver, lambda d: visible(d, "#memory-empty"), "an empty memory should say so")
    click(driver, "#new-chat-button")
    send(driver, "I keep bees on my balcony, I grow tomatoes too")

    def facts(d):
        return [e.text for e in css(d, "#memory-list .memory .memory-fact")]

    # distilled off the reply path; the open tab follows MEMORY_WRITTEN on the live event stream
    wait(driver, lambda d: {"I keep bees on my balcony", "I grow tomatoes too"} <= set(facts(d)),
         "the memory tab did not show the two facts once they were remembered", timeout=60)
    bees = [e for e in css(driver, "#memory-list .memory") if "bees" in e.text][0].get_attribute("data-memory-id")
    click(driver, f"#memory-list .memory[data-memory-id='{bees}'] .memory-forget")
    wait(driver, lambda d: facts(d) == ["I grow tomatoes too"], "the forgotten fact is still listed")
    assert "Forgotten" in css(driver, "#memory-status")[0].text

    query = css(driver, "#memory-query")[0]
    query.send_keys("vegetables in my garden")
    click(driver, "#memory-search-button")
    wait(driver, lambda d: "match" in " ".join(e.text for e in css(d, "#memory-list .memory .item-sub")),
         "a search does not show how well each memory matches")
    query.clear()

    click(driver, "#memory-clear")
    wait(driver, lambda d: d.switch_to.alert, "forgetting everything did not ask first").accept()
    wait(driver, lambda d: visible(d, "#memory-empty") and facts(d) == [], "everything was not forgotten")
    assert "Forgot 1 memory" in css(driver, "#memory-status")[0].text
    driver.save_screenshot(str(artifacts_dir() / "browser_memory.png"))
