//! Fit and finish in headless Chromium: a dark theme that follows the
//! system unless chosen and stays chosen, keyboard shortcuts for the common
//! moves, and pages that fit a phone's width.

use fantoccini::Locator;
use serde_json::Value;

use super::{browser, screenshot, serve, start_driver, text, wait_text, Browser, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

async fn js(browser: &Browser, script: &str) -> Value {
    browser.execute(script, vec![]).await.unwrap()
}

async fn background(browser: &Browser) -> String {
    js(browser, "return getComputedStyle(document.body).backgroundColor")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

async fn press(browser: &Browser, key: &str) {
    let script = format!("document.dispatchEvent(new KeyboardEvent('keydown', {{key: {key:?}, bubbles: true}}))");
    js(browser, &script).await;
}

async fn wait_path(browser: &Browser, want: &str) {
    eventually(WAIT, want, || async {
        let url = browser.current_url().await.unwrap();
        let at = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        at == want
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dark_theme_is_chosen_once_and_shortcuts_move_around() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 12, 3, 2).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // Headless Chromium reports a light system theme: the page follows it.
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, r#"tr[data-queue="orders"] td.pending"#, "12").await;
    assert_eq!(
        js(&browser, "return document.documentElement.dataset.theme").await,
        "light"
    );
    assert_eq!(background(&browser).await, "rgb(246, 247, 249)");
    assert_eq!(text(&browser, "#theme").await, "☾ dark");

    // Chosen dark: every page of this browser draws dark from then on.
    super::click(&browser, "#theme").await;
    assert_eq!(
        js(&browser, "return document.documentElement.dataset.theme").await,
        "dark"
    );
    assert_eq!(background(&browser).await, "rgb(12, 17, 29)");
    assert_eq!(text(&browser, "#theme").await, "☀ light");
    screenshot(&browser, "overview-dark").await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#pending", "12").await;
    assert_eq!(background(&browser).await, "rgb(12, 17, 29)");
    screenshot(&browser, "queue-dark").await;

    // Shortcuts: / to the search, Escape out of it, ? for the list, w to
    // this queue's workers, o to the overview, t back to light.
    press(&browser, "/").await;
    assert_eq!(js(&browser, "return document.activeElement.id").await, "search-q");
    browser
        .find(Locator::Css("#search-q"))
        .await
        .unwrap()
        .send_keys("\u{e00c}")
        .await
        .unwrap();
    assert_eq!(
        js(&browser, "return document.activeElement === document.body").await,
        true
    );
    press(&browser, "?").await;
    assert!(text(&browser, "#shortcuts").await.starts_with("Keyboard shortcuts"));
    screenshot(&browser, "queue-shortcuts").await;
    press(&browser, "?").await;
    assert_eq!(
        js(&browser, "return document.getElementById('shortcuts').hidden").await,
        true
    );
    press(&browser, "w").await;
    wait_path(&browser, "/workers?queue=orders").await;
    press(&browser, "o").await;
    wait_path(&browser, "/").await;
    wait_text(&browser, r#"tr[data-queue="orders"] td.pending"#, "12").await;
    press(&browser, "t").await;
    assert_eq!(background(&browser).await, "rgb(246, 247, 249)");
    // Typed into a field, a letter is text, not a shortcut.
    browser
        .find(Locator::Css("#filter"))
        .await
        .unwrap()
        .send_keys("wo")
        .await
        .unwrap();
    assert_eq!(browser.current_url().await.unwrap().path(), "/");
    assert_eq!(background(&browser).await, "rgb(246, 247, 249)");

    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_the_pages_fit_the_screens_width() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders-with-a-rather-long-name-for-a-phone", 60, 3, 4).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.set_window_size(390, 844).await.unwrap();

    let fits = "return document.documentElement.scrollWidth <= window.innerWidth + 1";
    // What sticks out, to say in a failure: the outermost elements past the right edge.
    let wide = "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !(e.parentElement && e.parentElement.getBoundingClientRect().right > window.innerWidth + 1)).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8).join(', ')";
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(
        &browser,
        r#"tr[data-queue="orders-with-a-rather-long-name-for-a-phone"] td.pending"#,
        "60",
    )
    .await;
    assert_eq!(
        js(&browser, fits).await,
        true,
        "the overview scrolls sideways: {}",
        js(&browser, wide).await
    );
    screenshot(&browser, "overview-phone").await;
    browser
        .goto(&format!("{url}/queue?name=orders-with-a-rather-long-name-for-a-phone"))
        .await
        .unwrap();
    wait_text(&browser, "#pending", "60").await;
    screenshot(&browser, "queue-phone").await;
    assert_eq!(
        js(&browser, fits).await,
        true,
        "the queue page scrolls sideways: {}",
        js(&browser, wide).await
    );
    browser.goto(&format!("{url}/workers")).await.unwrap();
    assert_eq!(
        js(&browser, fits).await,
        true,
        "the workers page scrolls sideways: {}",
        js(&browser, wide).await
    );

    browser.close().await.unwrap();
    driver.session = None;
}

/// One line of text: how many lines the element's text takes.
const LINES: &str = "const range = document.createRange(); range.selectNodeContents(arguments[0]);\
     return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;";

/// At 1,400 px the queue page's header keeps "find job" and the live time on
/// one line each and shows the server's whole text (none cut with "…");
/// on a phone it wraps without scrolling sideways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_pages_header_fits_at_1400_px_and_on_a_phone() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders-busy", 40, 3, 2).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.set_window_size(1400, 900).await.unwrap();
    browser.goto(&format!("{url}/queue?name=orders-busy")).await.unwrap();
    wait_text(&browser, "#pending", "40").await;
    eventually(WAIT, "the header's server text", || async {
        text(&browser, "#server").await.contains("maxmemory")
    })
    .await;
    eventually(WAIT, "live", || async {
        text(&browser, "#live").await.starts_with("live · ")
    })
    .await;
    let lines = |css: &'static str| {
        let browser = &browser;
        async move {
            let node = browser.find(Locator::Css(css)).await.unwrap();
            let args = vec![serde_json::to_value(&node).unwrap()];
            browser.execute(LINES, args).await.unwrap()
        }
    };
    assert_eq!(lines("#job-search button").await, 1, "find job on one line");
    assert_eq!(lines("#live").await, 1, "the live time on one line");
    assert_eq!(lines("#theme").await, 1);
    let cut = js(
        &browser,
        "const s = document.getElementById('server'); return s.scrollWidth > s.clientWidth + 1",
    )
    .await;
    assert_eq!(
        cut,
        false,
        "the server's text is cut: {}",
        text(&browser, "#server").await
    );
    screenshot(&browser, "queue-header-1400").await;

    browser.set_window_size(390, 844).await.unwrap();
    let fits = "return document.documentElement.scrollWidth <= window.innerWidth + 1";
    eventually(WAIT, "the phone layout", || async { js(&browser, fits).await == true }).await;
    assert_eq!(lines("#job-search button").await, 1);
    screenshot(&browser, "queue-header-phone").await;
    browser.close().await.unwrap();
    driver.session = None;
}
