"""tensorflow-tts-serve as a real process: chunked streaming over real HTTP, and the web page in a real browser.

The browser test drives Debian's chromium through chromium-driver with selenium; it skips
(saying so) where they are not installed (.ci/run installs them).
"""

import shutil
import time

import httpx
import pytest

from helpers.processes import free_port
from tensorflow_tts.serving.process import ServerStartError, start_server
from test_export import LJSPEECH_MAPPER
from test_serve import SAMPLING_RATE, voice_folders

SENTENCE = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The URL of a server started with tensorflow-tts-serve on the tiny voice (stopped after the module)."""
    acoustic, vocoder = voice_folders(tmp_path_factory.mktemp("serve_process"))
    args = ["--acoustic", acoustic, "--vocoder", vocoder, "--processor", LJSPEECH_MAPPER, "--verbose", "0"]
    try:
        process, url = start_server(args, free_port(), timeout_s=120)
    except ServerStartError as error:
        pytest.fail(str(error))
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_streaming_is_chunked_and_audio_leaves_before_the_end(server):
    text = " ".join(["This sentence is read on its own, then the vocoder streams it."] * 4)
    started = time.perf_counter()
    arrivals = []
    with httpx.stream("POST", f"{server}/v1/synthesize", json={"text": text, "stream": True, "format": "pcm16"},
                      timeout=60) as response:
        assert response.status_code == 200 and response.headers["transfer-encoding"] == "chunked"
        for chunk in response.iter_raw():
            arrivals.append((time.perf_counter() - started, len(chunk)))
    assert len(arrivals) > 1
    first, last = arrivals[0][0], arrivals[-1][0]
    assert first < last and sum(size for _, size in arrivals) % 2 == 0


def browser():
    """A headless chromium driven by selenium, or a skip saying what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no browser: install Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--autoplay-policy=no-user-gesture-required"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))


def test_the_page_plays_a_wav_in_a_real_browser(server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    expected = httpx.post(f"{server}/v1/synthesize", json={"text": SENTENCE}, timeout=60)
    expected_seconds = (len(expected.content) - 44) / 2 / SAMPLING_RATE
    driver = browser()
    try:
        driver.get(f"{server}/")
        wait = WebDriverWait(driver, 60)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#voice option"))
        box = driver.find_element(By.ID, "text")
        box.clear()
        box.send_keys(SENTENCE)
        driver.find_element(By.ID, "play").click()
        duration = wait.until(lambda d: d.execute_script(
            "const audio = document.getElementById('audio');"
            "return audio.src.startsWith('blob:') && audio.readyState >= 1 && audio.duration > 0 ? audio.duration : null;"))
        assert abs(duration - expected_seconds) < 0.01
        assert driver.execute_script("return document.getElementById('audio').error") is None
        link = driver.find_element(By.ID, "download")
        assert link.is_displayed() and link.get_attribute("href").startswith("blob:")
        assert driver.find_element(By.ID, "status").get_attribute("class") != "error"
    finally:
        driver.quit()
